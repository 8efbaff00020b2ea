// The host API declarations do what an author's editor needs: a plain JavaScript workflow that
// names them in JSDoc is checked against them (completion comes from the same types).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

const API = resolve(import.meta.dirname, 'index.ts');
const dir = mkdtempSync(join(tmpdir(), 'pal-api-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function check(source: string): string[] {
  const file = join(dir, `workflow-${Math.random().toString(36).slice(2)}.js`);
  writeFileSync(file, source.replaceAll('API', JSON.stringify(API)));
  const program = ts.createProgram([file], {
    allowJs: true,
    checkJs: true,
    noEmit: true,
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    allowImportingTsExtensions: true,
    skipLibCheck: true,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file?.fileName === file)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('the workflow host API declarations', () => {
  it('accept a workflow that uses pal as documented', () => {
    expect(
      check(`
/** @param {import(API).TransactionInput} input
 *  @param {import(API).Pal} pal
 *  @returns {import(API).TransactionReturn} */
export function runWorkflow(input, pal) {
  pal.vars.set('amount', input.values.amount ?? '0');
  pal.vars.set('count', 3);
  pal.transaction?.setStatus('SUBMITTED');
  pal.roles.assign('sso', 'approver');
  pal.mail.send({ to: 'sso', subject: 's', text: 't', action: 'approve' });
  pal.log('done', pal.vars.all());
  return { messages: [{ message: 'ok' }], recordsProcessed: 1 };
}`),
    ).toEqual([]);
  });

  it('accept a session form run that reads its signatures and the documents', () => {
    expect(
      check(`
/** @param {import(API).TransactionInput} input
 *  @param {import(API).Pal} pal */
export function submit(input, pal) {
  const signed = (input.signatures ?? []).filter((s) => s.kind === 'DRAWN').map((s) => s.recordTime);
  const documents = pal.documents?.list() ?? [];
  const amount = documents[0]?.fields?.find((f) => f.id === 'amount')?.value ?? '0';
  pal.documents?.setField('documents/claim.pdf', 'total', Number(amount) + signed.length);
  pal.documents?.clearSignature('documents/claim.pdf', 'employee');
}`),
    ).toEqual([]);
    expect(
      check(`
/** @param {import(API).TransactionInput} input
 *  @param {import(API).Pal} pal */
export function submit(input, pal) {
  pal.documents?.setField('documents/claim.pdf', {});
  return input.signatures?.[0]?.image?.toFixed();
}`).join('\n'),
    ).toMatch(
      /Expected 3 arguments, but got 2[\s\S]*Property 'toFixed' does not exist on type 'string'/,
    );
  });

  it('accept an entry that fills in the person, and flag a person taken for a string', () => {
    expect(
      check(`
/** @param {import(API).TransactionInput} input
 *  @param {import(API).Pal} pal */
export function enter(input, pal) {
  const { firstName, lastName, email } = input.person ?? { firstName: '', lastName: '', email: '' };
  pal.documents?.setField('documents/claim.pdf', 'name', \`\${firstName} \${lastName}\`);
  pal.vars.set('email', email);
}`),
    ).toEqual([]);
    expect(
      check(`
/** @param {import(API).TransactionInput} input */
export function enter(input) {
  return input.person.toUpperCase();
}`).join('\n'),
    ).toMatch(/'input.person' is possibly 'undefined'[\s\S]*Property 'toUpperCase' does not exist/);
  });

  it('accept a run that hands the completed PDF on, and flag using it as a string unchecked', () => {
    expect(
      check(`
/** @param {import(API).TransactionInput} input
 *  @param {import(API).Pal} pal */
export function fetch(input, pal) {
  const pdf = pal.documents?.completed('documents/claim.pdf') ?? null;
  return { success: true, recordsProcessed: 0, data: pdf === null ? [] : [{ name: 'claim.pdf', value: pdf }] };
}`),
    ).toEqual([]);
    expect(
      check(`
/** @param {import(API).TransactionInput} input
 *  @param {import(API).Pal} pal */
export function fetch(input, pal) {
  return pal.documents?.completed('documents/claim.pdf').length;
}`).join('\n'),
    ).toMatch(/possibly 'null'/);
  });

  it('flag what the API does not have', () => {
    const problems = check(`
/** @param {import(API).ConsoleInput} input
 *  @param {import(API).Pal} pal */
export function runWorkflow(input, pal) {
  pal.vars.put('a', 'b');
  pal.vars.set('a', {});
  pal.mail.send({ to: 'sso' });
  return input.palId.toFixed();
}`);
    expect(problems.join('\n')).toMatch(/Property 'put' does not exist/);
    expect(problems.join('\n')).toMatch(
      /not assignable to parameter of type 'string \| number \| boolean'/,
    );
    expect(problems.join('\n')).toMatch(/missing the following properties.*subject/s);
    expect(problems.join('\n')).toMatch(/Property 'toFixed' does not exist on type 'string'/);
  });
});
