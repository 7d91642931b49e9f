package aeron.spark;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.TaskContext;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.connector.write.streaming.StreamingDataWriterFactory;
import org.apache.spark.sql.connector.write.streaming.StreamingWrite;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;

import aeron.spark.Options.OptionException;

/**
 * The JVM connector's sink (docs/spark.md, "The JVM connector"): aeron_async/spark/sink.py's write
 * path in the JVM. Options and the DataFrame's schema are checked when the write is planned (so bad
 * input fails at query start); each task attempt publishes its rows on its own exclusive publication
 * ({@link SinkWriter}), with the reserved values of aeron_async/spark/provenance.py.
 */
final class AeronWrite implements WriteBuilder, SupportsTruncate, Write {
    /** provenance.py's kinds. */
    static final int KIND_STREAM = 0, KIND_BATCH_WRITE = 1;

    private final SinkOptions options;
    private final int dataIndex;
    private final boolean dataIsString;
    private final int reservedIndex;     // -1: no reserved_value column
    private final boolean reservedIsInt;
    private boolean truncate;            // mode("overwrite") / outputMode("complete"): refused when planned

    AeronWrite(LogicalWriteInfo info) {
        options = SinkOptions.parse(info.options().asCaseSensitiveMap());
        StructType schema = info.schema();
        List<String> names = List.of(schema.fieldNames());
        if (!names.contains("data")) {
            throw new OptionException("the aeron sink needs a column named 'data' (binary or string) holding each "
                + "message; the DataFrame has " + pyList(names) + ": select or alias one, e.g. "
                + "df.selectExpr('to_json(struct(*)) AS data')");
        }
        List<String> extra = new ArrayList<>();
        for (String name : names) {
            if (!name.equals("data") && !name.equals("reserved_value")) {
                extra.add(name);
            }
        }
        if (!extra.isEmpty()) {
            throw new OptionException("the aeron sink writes only 'data' and the optional 'reserved_value'; the "
                + "DataFrame also has " + pyList(extra) + ": select just those columns (Spark's functions such as "
                + "to_json or concat build 'data')");
        }
        dataIndex = schema.fieldIndex("data");
        DataType dataType = schema.fields()[dataIndex].dataType();
        if (!(dataType instanceof BinaryType) && !(dataType instanceof StringType)) {
            throw new OptionException("the aeron sink's 'data' column must be binary or string, not "
                + dataType.simpleString() + ": cast it, e.g. CAST(data AS BINARY), or build it with to_json");
        }
        dataIsString = dataType instanceof StringType;
        reservedIndex = names.contains("reserved_value") ? schema.fieldIndex("reserved_value") : -1;
        DataType reservedType = reservedIndex < 0 ? null : schema.fields()[reservedIndex].dataType();
        if (reservedType != null && !(reservedType instanceof LongType) && !(reservedType instanceof IntegerType)) {
            throw new OptionException("the aeron sink's 'reserved_value' column must be a long (bigint), not "
                + reservedType.simpleString() + ": cast it with CAST(reserved_value AS BIGINT)");
        }
        reservedIsInt = reservedType instanceof IntegerType;
    }

    private static String pyList(List<String> names) {
        List<String> quoted = new ArrayList<>();
        for (String name : names) {
            quoted.add(Options.repr(name));
        }
        return "[" + String.join(", ", quoted) + "]";
    }

    @Override
    public Write build() {
        return this;
    }

    /** mode("overwrite") (a batch) or outputMode("complete") (a stream), which Spark asks of a table
     *  with TRUNCATE (AeronTable, as the Python source's): a stream cannot be overwritten, so the write
     *  is refused when planned, in the Python sink's words (sink.py's writers). */
    @Override
    public WriteBuilder truncate() {
        truncate = true;
        return this;
    }

    @Override
    public String description() {
        return "aeron sink " + options.channel + " stream " + options.streamId;
    }

    /** What a write's plan shows (AppendData's arguments): the JVM sink and where it publishes. */
    @Override
    public String toString() {
        return description();
    }

    /** `df.write.format("aeron").mode("append")...save()`: the write's id (random, 32 bits) in the
     *  reserved values. */
    @Override
    public BatchWrite toBatch() {
        if (truncate) {
            throw new OptionException("the aeron sink appends to a stream and cannot overwrite it: use .mode('append')");
        }
        long writeId = new SecureRandom().nextInt() & 0xFFFFFFFFL;
        return new Batch(this, writeId);
    }

    /** `df.writeStream.format("aeron")...start()`: the micro-batch id in the reserved values (a batch
     *  re-run after a restart carries the same id). */
    @Override
    public StreamingWrite toStreaming() {
        if (truncate) {
            throw new OptionException("the aeron sink appends to a stream: use outputMode('append'), not 'complete'");
        }
        return new Streaming(this);
    }

    private static final class Batch implements BatchWrite {
        private final AeronWrite write;
        private final long writeId;

        Batch(AeronWrite write, long writeId) {
            this.write = write;
            this.writeId = writeId;
        }

        @Override
        public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
            return new Factory(write, KIND_BATCH_WRITE, writeId);
        }

        @Override
        public void commit(WriterCommitMessage[] messages) {
        }

        @Override
        public void abort(WriterCommitMessage[] messages) {
            // what finished attempts published stays on the stream (a stream cannot be taken back);
            // the source's dropRepeats=true keeps only finished attempts (docs/spark.md)
        }
    }

    private static final class Streaming implements StreamingWrite {
        private final AeronWrite write;

        Streaming(AeronWrite write) {
            this.write = write;
        }

        @Override
        public StreamingDataWriterFactory createStreamingWriterFactory(PhysicalWriteInfo info) {
            return new Factory(write, KIND_STREAM, 0);
        }

        @Override
        public void commit(long epochId, WriterCommitMessage[] messages) {
        }

        @Override
        public void abort(long epochId, WriterCommitMessage[] messages) {
        }
    }

    /** What each task needs (serialized to the executors): the checked options and columns. */
    private static final class Factory implements DataWriterFactory, StreamingDataWriterFactory {
        private static final long serialVersionUID = 1L;
        private final SinkOptions options;
        private final int kind;
        private final long batch;
        private final int dataIndex;
        private final boolean dataIsString;
        private final int reservedIndex;
        private final boolean reservedIsInt;

        Factory(AeronWrite w, int kind, long batch) {
            options = w.options;
            this.kind = kind;
            this.batch = batch;
            dataIndex = w.dataIndex;
            dataIsString = w.dataIsString;
            reservedIndex = w.reservedIndex;
            reservedIsInt = w.reservedIsInt;
        }

        private SinkWriter writer(long batchId, int partitionId) {
            TaskContext context = TaskContext.get();
            int attempt = context == null ? 0 : context.attemptNumber();
            return new SinkWriter(options, kind, batchId, partitionId, attempt, dataIndex, dataIsString, reservedIndex,
                reservedIsInt);
        }

        @Override
        public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
            return writer(batch, partitionId);
        }

        @Override
        public DataWriter<InternalRow> createWriter(int partitionId, long taskId, long epochId) {
            return writer(epochId, partitionId);
        }
    }
}
