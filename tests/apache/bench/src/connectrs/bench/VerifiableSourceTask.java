// The task of VerifiableSourceConnector (the migration test's stand-in for Apache's verifiable
// source): BenchSourceTask's records and offsets under the task class name a verifiable source
// task has.
package connectrs.bench;

public class VerifiableSourceTask extends BenchSourceTask {
}
