/** Bad input from the user: a flag, a file or the data in it. The CLI prints the message (which names
 *  the flag or file, the record and the field) and exits with code 2; every other error exits with 1. */
export class InputError extends Error {
  override name = 'InputError';
}
