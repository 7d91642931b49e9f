import java.io.IOException;

import aeron.spark.Native;

/**
 * The JVM connector's remote archive client alone (aeron_async/spark/jvm/native/aa_spark_jni_remote.c,
 * through aeron.spark.Native), for tests/spark/test_spark_jvm_remote_auth.py: connect with the
 * credentials of this process's environment and list one stream's recordings. Prints one line:
 * "OK <recording ids>" or "ERROR <the message>".
 *
 * args: aeronDir controlChannel controlStreamId responseChannel responseStreamId timeoutSeconds channel streamId
 */
public final class RemoteProbe {
    public static void main(String[] args) {
        Native.load();
        long session;
        try {
            session = Native.remoteOpen(args[0], args[1], Integer.parseInt(args[2]), args[3], Integer.parseInt(args[4]),
                Double.parseDouble(args[5]));
        } catch (IOException e) {
            System.out.println("ERROR " + e.getMessage());
            return;
        }
        try {
            long[] fields = (long[]) Native.remoteList(session, -1, args[6], Integer.parseInt(args[7]))[0];
            StringBuilder out = new StringBuilder("OK");
            for (int row = 0; row < fields.length / Native.RECORDING_FIELDS; row++) {
                out.append(' ').append(fields[row * Native.RECORDING_FIELDS]);
            }
            System.out.println(out);
        } catch (IOException e) {
            System.out.println("ERROR " + e.getMessage());
        } finally {
            Native.remoteClose(session);
        }
    }
}
