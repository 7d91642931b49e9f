package aeron.spark;

import java.nio.ByteBuffer;

import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Column vectors over the buffers the native walk fills (no object per message): data bytes with
 * int32 offsets, int64 positions and reserved values; the recording's constant columns.
 */
final class Vectors {
    private Vectors() {
    }

    abstract static class Base extends ColumnVector {
        Base(DataType type) {
            super(type);
        }

        private UnsupportedOperationException unsupported() {
            return new UnsupportedOperationException("the aeron column " + type.simpleString()
                + " has no such accessor");
        }

        @Override public void close() { }
        @Override public boolean hasNull() { return false; }
        @Override public int numNulls() { return 0; }
        @Override public boolean isNullAt(int rowId) { return false; }
        @Override public boolean getBoolean(int rowId) { throw unsupported(); }
        @Override public byte getByte(int rowId) { throw unsupported(); }
        @Override public short getShort(int rowId) { throw unsupported(); }
        @Override public int getInt(int rowId) { throw unsupported(); }
        @Override public long getLong(int rowId) { throw unsupported(); }
        @Override public float getFloat(int rowId) { throw unsupported(); }
        @Override public double getDouble(int rowId) { throw unsupported(); }
        @Override public ColumnarArray getArray(int rowId) { throw unsupported(); }
        @Override public ColumnarMap getMap(int ordinal) { throw unsupported(); }
        @Override public Decimal getDecimal(int rowId, int precision, int scale) { throw unsupported(); }
        @Override public UTF8String getUTF8String(int rowId) { throw unsupported(); }
        @Override public byte[] getBinary(int rowId) { throw unsupported(); }
        @Override public ColumnVector getChild(int ordinal) { throw unsupported(); }
    }

    static final class Binary extends Base {
        private final ByteBuffer data, offsets;

        Binary(ByteBuffer data, ByteBuffer offsets) {
            super(DataTypes.BinaryType);
            this.data = data;
            this.offsets = offsets;
        }

        @Override
        public byte[] getBinary(int rowId) {
            int start = offsets.getInt(4 * rowId);
            byte[] bytes = new byte[offsets.getInt(4 * rowId + 4) - start];
            data.get(start, bytes);
            return bytes;
        }
    }

    static final class Longs extends Base {
        private final ByteBuffer values;

        Longs(ByteBuffer values) {
            super(DataTypes.LongType);
            this.values = values;
        }

        @Override
        public long getLong(int rowId) {
            return values.getLong(8 * rowId);
        }
    }

    static final class ConstantLong extends Base {
        private final long value;

        ConstantLong(long value) {
            super(DataTypes.LongType);
            this.value = value;
        }

        @Override
        public long getLong(int rowId) {
            return value;
        }
    }

    static final class ConstantInt extends Base {
        private final int value;

        ConstantInt(int value) {
            super(DataTypes.IntegerType);
            this.value = value;
        }

        @Override
        public int getInt(int rowId) {
            return value;
        }
    }

    static final class ConstantString extends Base {
        private final UTF8String value;

        ConstantString(String value) {
            super(DataTypes.StringType);
            this.value = UTF8String.fromString(value);
        }

        @Override
        public UTF8String getUTF8String(int rowId) {
            return value;
        }
    }
}
