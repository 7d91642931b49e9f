package aeron.spark;

import java.io.FileWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.apache.spark.sql.ForeachWriter;
import org.apache.spark.sql.Row;

/**
 * A foreach writer in the JVM for `aeron-async bench-spark`'s Real-time Mode figure (docs/benchmarks.md,
 * "The JVM connector"): each row's `data` starts with its publish time (nanoseconds since the epoch,
 * little-endian) and a kind byte; the writer appends "kind latency_ms" lines to a file of its own in
 * `directory`, so the end-to-end latency is measured without a Python worker in the path.
 */
public final class LatencyWriter extends ForeachWriter<Row> {
    private static final long serialVersionUID = 1L;

    private final String directory;
    private transient Writer out;

    public LatencyWriter(String directory) {
        this.directory = directory;
    }

    @Override
    public boolean open(long partitionId, long epochId) {
        try {
            out = new FileWriter(directory + "/jvm-" + ProcessHandle.current().pid() + "-" + partitionId + "-" + epochId
                + ".txt", true);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return true;
    }

    @Override
    public void process(Row row) {
        java.time.Instant at = java.time.Instant.now();
        long now = at.getEpochSecond() * 1_000_000_000L + at.getNano();
        byte[] data = row.getAs("data");
        long sent = ByteBuffer.wrap(data, 0, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
        if (sent == 0) {
            return;
        }
        try {
            out.write((char) data[8] + " " + (now - sent) / 1e6 + "\n");
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close(Throwable error) {
        try {
            if (out != null) {
                out.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
