package aeron.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import aeron.spark.Options.OptionException;

/**
 * The write options of the JVM connector's sink: aeron_async/spark/options.py's SINK_OPTIONS, checked
 * the same way with the same messages (tests/spark/test_spark_jvm.py holds the two side by
 * side). The archive control options (CONTROL) reach the archive's control session for durable=true
 * as in the Python sink (SinkWriter waits through it when any of them is given; without them it
 * reads the recording's rec-pos counter in the local driver's CnC file); without durable=true
 * neither sink uses them, and this one checks them alike.
 */
final class SinkOptions implements Serializable {
    private static final long serialVersionUID = 1L;

    public static final List<String> SINK_OPTIONS = List.of(
        "channel", "streamId", "durable", "connectTimeout", "offerTimeout", "durableTimeout");
    /** Archive options the Python sink takes that this one does not apply (neither sink uses them). */
    static final List<String> NOT_APPLIED = List.of("archiveDir");
    /** The archive control options: with durable=true, naming any of them makes the wait go through the
     *  archive's control session they name (SinkWriter.waitThroughArchive), as the Python sink's does. */
    static final List<String> CONTROL = List.of(
        "controlChannel", "controlStreamId", "responseChannel", "responseStreamId", "timeout");
    static final List<String> SPARK_STREAM_WRITE_OPTIONS = List.of("checkpointlocation", "queryname");

    final String aeronDir;      // null: AERON_DIR, else Aeron's default
    final String channel;
    final int streamId;
    final boolean durable;
    final double connectTimeout;
    final double offerTimeout;
    final double durableTimeout;
    /** durable=true with an archive control option: the wait goes through the archive's control session */
    final boolean control;
    final String controlChannel, responseChannel;   // responseChannel's `{host}` replaced by each task
    final int controlStreamId, responseStreamId;
    final double timeout;

    private SinkOptions(Map<String, String> found) {
        for (String name : List.of("channel", "streamId")) {
            if (!found.containsKey(name)) {
                throw new OptionException("the sink needs option '" + name
                    + "': the channel and stream id to publish on");
            }
        }
        // the archive options, checked as options.py's parse_archive_options checks them (in its order),
        // with its defaults: only durable=true's wait through the archive's control session uses them
        timeout = seconds("timeout", found.get("timeout"), 10.0);
        String dir = found.get("aeronDir");
        if (dir != null && dir.strip().isEmpty()) {
            throw new OptionException("aeronDir is empty: name the media driver's directory, or leave the option out");
        }
        String archiveDir = found.get("archiveDir");
        if (archiveDir != null && archiveDir.strip().isEmpty()) {
            throw new OptionException("archiveDir is empty: name the archive's directory, or leave the option out");
        }
        controlChannel = archiveChannel("controlChannel", found.getOrDefault("controlChannel",
            "aeron:ipc?term-length=64k"));
        controlStreamId = (int) Options.integer("controlStreamId", found.getOrDefault("controlStreamId", "10"),
            Integer.MIN_VALUE, Integer.MAX_VALUE);
        responseChannel = archiveChannel("responseChannel", found.getOrDefault("responseChannel",
            "aeron:ipc?term-length=64k"));
        responseStreamId = (int) Options.integer("responseStreamId", found.getOrDefault("responseStreamId", "20"),
            Integer.MIN_VALUE, Integer.MAX_VALUE);
        aeronDir = dir;
        channel = sinkChannel(found.get("channel"));
        streamId = (int) Options.integer("streamId", found.get("streamId"), Integer.MIN_VALUE, Integer.MAX_VALUE);
        durable = Options.bool("durable", found.getOrDefault("durable", "false"));
        connectTimeout = seconds("connectTimeout", found.get("connectTimeout"), 10.0);
        offerTimeout = seconds("offerTimeout", found.get("offerTimeout"), 30.0);
        durableTimeout = seconds("durableTimeout", found.get("durableTimeout"), 30.0);
        control = durable && CONTROL.stream().anyMatch(found::containsKey);
    }

    private static String archiveChannel(String name, String value) {
        if (!value.startsWith("aeron:")) {
            throw new OptionException(name + "=" + Options.repr(value)
                + " is not an Aeron channel (aeron:ipc or aeron:udp?endpoint=host:port)");
        }
        return value;
    }

    /** The write options (batch and streaming), checked; `path` (`save(path)`) is refused. */
    static SinkOptions parse(Map<String, String> options) {
        List<String> known = new ArrayList<>(Options.ARCHIVE_OPTIONS);
        known.addAll(SINK_OPTIONS);
        Map<String, String> canonical = new LinkedHashMap<>();
        for (String name : known) {
            canonical.put(name.toLowerCase(Locale.ROOT), name);
        }
        Map<String, String> found = new LinkedHashMap<>();
        for (Map.Entry<String, String> option : options.entrySet()) {
            String key = option.getKey().toLowerCase(Locale.ROOT);
            if (key.equals("path") && option.getValue() != null && !option.getValue().isEmpty()) {
                throw new OptionException("the sink takes no path: give .option('channel', ...) and "
                    + ".option('streamId', ...)");
            }
            if (SPARK_STREAM_WRITE_OPTIONS.contains(key) || key.equals("path")) {
                continue;
            }
            String name = canonical.get(key);
            if (name == null) {
                throw new OptionException("unknown option " + Options.repr(key) + "; the options here are: "
                    + String.join(", ", known));
            }
            found.put(name, option.getValue());
        }
        return new SinkOptions(found);
    }

    private static String sinkChannel(String text) {
        int question = text.indexOf('?');
        String media = question < 0 ? text : text.substring(0, question);
        String params = question < 0 ? "" : text.substring(question + 1);
        if (!media.equals("aeron:ipc") && !media.equals("aeron:udp")) {
            throw new OptionException("channel=" + Options.repr(text) + " is not a channel to publish on: give "
                + "aeron:ipc or aeron:udp?endpoint=host:port, then |key=value parameters");
        }
        for (String pair : params.split("\\|")) {
            if (pair.isEmpty()) {
                continue;
            }
            int equals = pair.indexOf('=');
            if (equals <= 0 || equals == pair.length() - 1) {
                throw new OptionException("channel=" + Options.repr(text) + ": parameter " + Options.repr(pair)
                    + " is not key=value");
            }
        }
        if (media.equals("aeron:udp") && !params.contains("endpoint=") && !params.contains("control=")) {
            throw new OptionException("channel=" + Options.repr(text) + ": a UDP channel to publish on needs "
                + "endpoint=host:port (or control=host:port for multi-destination-cast)");
        }
        return text;
    }

    static double seconds(String name, String text, double fallback) {
        if (text == null) {
            return fallback;
        }
        double value;
        try {
            value = Double.parseDouble(text.strip());
        } catch (NumberFormatException e) {
            throw new OptionException(name + "=" + Options.repr(text) + " is not a number of seconds");
        }
        if (!(value > 0 && value <= 3600)) {
            throw new OptionException(name + "=" + Options.repr(text) + " must be between 0 and 3600 seconds");
        }
        return value;
    }
}
