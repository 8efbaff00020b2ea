/**
 * Bad input to the contract tools (a base that does not exist, schemas that do not load, a
 * shallow clone without the base): the CLI prints the message as one line and exits 2.
 */
export class ContractInputError extends Error {
  override readonly name = 'ContractInputError';
}
