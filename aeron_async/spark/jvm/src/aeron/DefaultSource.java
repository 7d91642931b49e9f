package aeron;

/**
 * The class Spark finds for {@code format("aeron")} when the connector's jar is on the classpath
 * (Spark tries {@code <format>.DefaultSource}): the JVM connector, {@link aeron.spark.AeronProvider}.
 * It registers no DataSourceRegister short name, so it does not clash with the Python source of the
 * same name (docs/spark.md, "The JVM connector").
 */
public final class DefaultSource extends aeron.spark.AeronProvider {
}
