package aeron.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The read options of the JVM connector: aeron_async/spark/options.py's, checked the same way with
 * the same messages (tests/spark/test_spark_jvm.py holds the two tables side by side), plus
 * archiveDir, the directory whose catalog and segment files it reads.
 */
public final class Options implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final long EARLIEST = -2, LATEST = -1;
    public static final List<String> ARCHIVE_OPTIONS = List.of(
        "aeronDir", "controlChannel", "controlStreamId", "responseChannel", "responseStreamId", "timeout",
        "archiveDir");
    public static final List<String> READ_OPTIONS = List.of(
        "recordingIds", "channel", "streamId", "startingPositions", "endingPositions", "maxBytesPerPartition",
        "replayChannel", "replayStreamId", "failOnDataLoss", "maxRecordsPerTrigger", "maxBytesPerTrigger",
        "dropRepeats");
    static final List<String> BATCH_ONLY = List.of("endingPositions", "dropRepeats");
    static final List<String> STREAM_ONLY = List.of("maxRecordsPerTrigger", "maxBytesPerTrigger");
    static final long DEFAULT_MAX_BYTES_PER_PARTITION = 64L << 20;
    private static final Pattern SIZE = Pattern.compile("^\\s*(\\d+)\\s*([kmgKMG]?)[bB]?\\s*$");

    public final String archiveDir;
    public final long[] recordingIds;       // null: channel + streamId
    public final String channel;
    public final int streamId;
    public final long starting;             // EARLIEST / LATEST, or see startingMap
    public final Map<Long, Long> startingMap;
    public final long ending;
    public final Map<Long, Long> endingMap;
    public final long maxBytesPerPartition;
    /** maxBytesPerPartition given: else a batch read splits itself by Spark's parallelism (AeronScan.cut) */
    public final boolean maxBytesPerPartitionGiven;
    public final boolean failOnDataLoss;
    public final boolean streaming;
    public final String aeronDir;           // null: AERON_DIR, else Aeron's default
    public final long maxRecordsPerTrigger; // 0: none
    public final long maxBytesPerTrigger;   // 0: none
    public final boolean dropRepeats;       // a recorded sink stream's finished attempts only (Repeats)
    /** no archiveDir: a read of a remote archive over its control protocol (Remote) */
    public final boolean remote;
    public final String controlChannel, responseChannel, replayChannel;
    public final int controlStreamId, responseStreamId, replayStreamId;
    public final double timeout;

    /** A malformed or inapplicable option; the message starts "aeron data source: " as OptionError's. */
    public static final class OptionException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        public OptionException(String message) {
            super("aeron data source: " + message);
        }
    }

    private Options(Map<String, String> found, boolean streaming) {
        this.streaming = streaming;
        for (String name : streaming ? BATCH_ONLY : STREAM_ONLY) {
            if (found.containsKey(name)) {
                throw new OptionException(name + " applies to spark." + (streaming ? "read" : "readStream")
                    + " only, not to spark." + (streaming ? "readStream" : "read"));
            }
        }
        if (found.containsKey("recordingIds")) {
            if (found.containsKey("channel") || found.containsKey("streamId")) {
                throw new OptionException("give either recordingIds or channel and streamId, not both");
            }
            LinkedHashSet<Long> ids = new LinkedHashSet<>();
            for (String part : found.get("recordingIds").split(",")) {
                if (!part.strip().isEmpty()) {
                    ids.add(integer("recordingIds", part, 0, Long.MAX_VALUE));
                }
            }
            if (ids.isEmpty()) {
                throw new OptionException("recordingIds is empty: give recording ids separated by commas, e.g. \"3,5\"");
            }
            recordingIds = ids.stream().mapToLong(Long::longValue).toArray();
            channel = null;
            streamId = 0;
        } else if (found.containsKey("channel") || found.containsKey("streamId")) {
            if (!found.containsKey("channel") || !found.containsKey("streamId")) {
                throw new OptionException("channel and streamId go together: the recordings of that stream whose "
                    + "channel contains `channel`");
            }
            recordingIds = null;
            channel = found.get("channel");
            if (channel.strip().isEmpty()) {
                throw new OptionException("channel is empty: give (part of) the recorded channel, e.g. aeron:ipc");
            }
            streamId = (int) integer("streamId", found.get("streamId"), Integer.MIN_VALUE, Integer.MAX_VALUE);
        } else {
            throw new OptionException("choose the recordings: option recordingIds (\"3,5\"), or channel and streamId");
        }
        Map<Long, Long> startMap = new TreeMap<>(), endMap = new TreeMap<>();
        starting = positions("startingPositions",
            found.getOrDefault("startingPositions", streaming ? "latest" : "earliest"), true, startMap);
        ending = positions("endingPositions", found.getOrDefault("endingPositions", "latest"), false, endMap);
        startingMap = startMap;
        endingMap = endMap;
        if (recordingIds != null) {
            for (Object[] pair : new Object[][] {{"startingPositions", startMap}, {"endingPositions", endMap}}) {
                @SuppressWarnings("unchecked") Map<Long, Long> map = (Map<Long, Long>) pair[1];
                List<Long> extra = new ArrayList<>();
                for (Long id : map.keySet()) {
                    if (Arrays.stream(recordingIds).noneMatch(r -> r == id)) {
                        extra.add(id);
                    }
                }
                if (!extra.isEmpty()) {
                    throw new OptionException(pair[0] + " names recordings " + extra
                        + " that recordingIds does not select");
                }
            }
        }
        maxBytesPerPartitionGiven = found.containsKey("maxBytesPerPartition");
        maxBytesPerPartition = size("maxBytesPerPartition",
            found.getOrDefault("maxBytesPerPartition", Long.toString(DEFAULT_MAX_BYTES_PER_PARTITION)), 1);
        failOnDataLoss = bool("failOnDataLoss", found.getOrDefault("failOnDataLoss", "true"));
        dropRepeats = bool("dropRepeats", found.getOrDefault("dropRepeats", "false"));
        timeout = SinkOptions.seconds("timeout", found.get("timeout"), 10.0);
        for (String name : List.of("controlChannel", "responseChannel", "replayChannel")) {
            if (found.containsKey(name) && !found.get(name).startsWith("aeron:")) {
                throw new OptionException(name + "=" + repr(found.get(name))
                    + " is not an Aeron channel (aeron:ipc or aeron:udp?endpoint=host:port)");
            }
        }
        for (String name : List.of("controlStreamId", "responseStreamId", "replayStreamId")) {
            if (found.containsKey(name)) {
                integer(name, found.get(name), Integer.MIN_VALUE, Integer.MAX_VALUE);
            }
        }
        controlChannel = found.getOrDefault("controlChannel", "aeron:ipc?term-length=64k");
        responseChannel = found.getOrDefault("responseChannel", "aeron:ipc?term-length=64k");
        replayChannel = found.getOrDefault("replayChannel", "aeron:ipc");
        controlStreamId = (int) integer("controlStreamId", found.getOrDefault("controlStreamId", "10"),
            Integer.MIN_VALUE, Integer.MAX_VALUE);
        responseStreamId = (int) integer("responseStreamId", found.getOrDefault("responseStreamId", "20"),
            Integer.MIN_VALUE, Integer.MAX_VALUE);
        replayStreamId = (int) integer("replayStreamId", found.getOrDefault("replayStreamId", "1001"),
            Integer.MIN_VALUE, Integer.MAX_VALUE);
        String dir = found.get("archiveDir");
        remote = dir == null;
        if (dir != null && dir.strip().isEmpty()) {
            throw new OptionException("archiveDir is empty: name the archive's directory, or leave the option out");
        }
        archiveDir = dir;
        String driverDir = found.get("aeronDir");
        if (driverDir != null && driverDir.strip().isEmpty()) {
            throw new OptionException("aeronDir is empty: name the media driver's directory, or leave the option out");
        }
        aeronDir = driverDir;
        maxRecordsPerTrigger = found.containsKey("maxRecordsPerTrigger")
            ? integer("maxRecordsPerTrigger", found.get("maxRecordsPerTrigger"), 1, Long.MAX_VALUE) : 0;
        maxBytesPerTrigger = found.containsKey("maxBytesPerTrigger")
            ? size("maxBytesPerTrigger", found.get("maxBytesPerTrigger"), 1) : 0;
    }

    /** The options of a batch (streaming false) or streaming read, checked: an unknown one is refused,
     *  naming the known ones. */
    public static Options parse(Map<String, String> options, boolean streaming) {
        List<String> known = new ArrayList<>(ARCHIVE_OPTIONS);
        known.addAll(READ_OPTIONS);
        Map<String, String> canonical = new LinkedHashMap<>();
        for (String name : known) {
            canonical.put(name.toLowerCase(Locale.ROOT), name);
        }
        Map<String, String> found = new LinkedHashMap<>();
        for (Map.Entry<String, String> option : options.entrySet()) {
            String name = canonical.get(option.getKey().toLowerCase(Locale.ROOT));
            if (name == null) {
                if (option.getKey().equalsIgnoreCase("path") && option.getValue().isEmpty()) {
                    continue;
                }
                // lower case, as Spark hands the options to options.py
                throw new OptionException("unknown option " + repr(option.getKey().toLowerCase(Locale.ROOT))
                    + "; the options here are: " + String.join(", ", known));
            }
            found.put(name, option.getValue());
        }
        return new Options(found, streaming);
    }

    static String repr(String text) {
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    static long integer(String name, String text, long minimum, long maximum) {
        long value;
        try {
            value = Long.parseLong(text.strip());
        } catch (NumberFormatException e) {
            throw new OptionException(name + "=" + repr(text) + " is not an integer");
        }
        if (value < minimum || value > maximum) {
            throw new OptionException(name + "=" + repr(text) + " must be between " + minimum + " and " + maximum);
        }
        return value;
    }

    static long size(String name, String text, long minimum) {
        Matcher match = SIZE.matcher(text);
        if (!match.matches()) {
            throw new OptionException(name + "=" + repr(text)
                + " is not a size: give bytes, or a number with k, m or g (\"64m\")");
        }
        int shift = switch (match.group(2).toLowerCase(Locale.ROOT)) {
            case "k" -> 10;
            case "m" -> 20;
            case "g" -> 30;
            default -> 0;
        };
        long value = Long.parseLong(match.group(1)) << shift;
        if (value < minimum) {
            throw new OptionException(name + "=" + repr(text) + " must be at least " + minimum + " bytes");
        }
        return value;
    }

    static boolean bool(String name, String text) {
        String lowered = text.strip().toLowerCase(Locale.ROOT);
        if (List.of("true", "1", "yes").contains(lowered)) {
            return true;
        }
        if (List.of("false", "0", "no").contains(lowered)) {
            return false;
        }
        throw new OptionException(name + "=" + repr(text) + " must be true or false");
    }

    private static final Pattern ENTRY = Pattern.compile("\\s*\"(-?\\d+)\"\\s*:\\s*(-?\\d+)\\s*");

    /** earliest / latest, or a JSON object of recording id to position (into `map`). */
    static long positions(String name, String text, boolean earliestAllowed, Map<Long, Long> map) {
        String word = text.strip().toLowerCase(Locale.ROOT);
        if (word.equals("latest")) {
            return LATEST;
        }
        if (earliestAllowed && word.equals("earliest")) {
            return EARLIEST;
        }
        String allowed = earliestAllowed ? "earliest or latest" : "latest";
        String body = text.strip();
        boolean object = body.startsWith("{") && body.endsWith("}") && body.length() > 2;
        if (object) {
            for (String entry : body.substring(1, body.length() - 1).split(",")) {
                Matcher match = ENTRY.matcher(entry);
                if (!match.matches()) {
                    object = false;
                    break;
                }
                long id = integer(name + " recording id", match.group(1), 0, Long.MAX_VALUE);
                long value = Long.parseLong(match.group(2));
                long lowest = earliestAllowed ? EARLIEST : LATEST;
                if (value < lowest) {
                    throw new OptionException(name + ": the position of recording " + match.group(1) + " is " + value
                        + "; give a position >= 0" + (earliestAllowed ? ", -2 (earliest)" : "") + " or -1 (latest)");
                }
                map.put(id, value);
            }
        }
        if (!object) {
            throw new OptionException(name + "=" + repr(text) + ": give " + allowed
                + ", or a JSON object of recording id to position, e.g. {\"3\": 4096} (-2 earliest, -1 latest)");
        }
        return LATEST;
    }

    /** A startingPositions / endingPositions value for one recording, checked against what it holds. */
    static long resolve(String name, long given, Map<Long, Long> map, long fallback, Recording r, long end) {
        long value = map.isEmpty() ? given : map.getOrDefault(r.id, fallback);
        if (value == EARLIEST) {
            return r.start;
        }
        if (value == LATEST) {
            return end;
        }
        if (value < r.start) {
            throw new OptionException(name + ": position " + value + " of recording " + r.id + " is before its start at "
                + r.start);
        }
        if (value > end) {
            throw new OptionException(name + ": position " + value + " of recording " + r.id + " is past its end: it "
                + "holds [" + r.start + ", " + end + ")");
        }
        return value;
    }
}
