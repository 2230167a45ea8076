/**
 * A failure whose message is already the one line an operator needs: what is wrong and what to do. The server
 * prints it as it is when it cannot start, the CLI when a command fails; neither shows a stack trace.
 */
export class OperatorError extends Error {
  override name = 'OperatorError'
}
