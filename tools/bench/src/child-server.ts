/**
 * The server under benchmark, in a process of its own: a fresh DATA_DIR, the demo pals, an API
 * client, optionally N seeded transactions; beside it, the baseline: a bare Fastify route that
 * returns the same bytes without authentication. Prints one JSON line with the addresses.
 * The database is SQLite in DATA_DIR, or the PostgreSQL database that DATABASE_URL names.
 * With --join, a second node on a database another bench server has seeded: nothing is seeded,
 * and the Authorization header of that server's API client is taken from BENCH_AUTH.
 *
 * With --hostile (and --workflows), the hostile test pal of the server's tests (wf-hostile) too.
 * With --webhook URL, the enterprise has a webhook endpoint at URL that takes every event type
 * (set WEBHOOK_ALLOW_PRIVATE=true for a loopback receiver).
 *
 *   tsx --conditions=@pal-workflow/source child-server.ts [--transactions N] [--workflows] [--hostile]
 *     [--join] [--webhook URL]
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { sql } from 'kysely';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import {
  addWebhookEndpoint,
  createClient,
  createEnterprise,
  createSso,
  createTransaction,
  deployPal,
  dialectOf,
  loadConfig,
  startServer,
} from '@pal-workflow/server/bench';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const count = Number(process.argv[process.argv.indexOf('--transactions') + 1] ?? 0) || 0;
const withWorkflows = process.argv.includes('--workflows');
const withHostile = process.argv.includes('--hostile');
const joining = process.argv.includes('--join');
if (joining && !process.env.BENCH_AUTH) throw new Error('--join needs BENCH_AUTH');
const webhook = process.argv.includes('--webhook')
  ? process.argv[process.argv.indexOf('--webhook') + 1]
  : undefined;
/** Transactions of the bench pal that T6 runs spread over (runs on one transaction queue up). */
const WORKFLOW_TRANSACTIONS = 400;

const ADJECTIVES = [
  'quarterly',
  'urgent',
  'annual',
  'regional',
  'internal',
  'external',
  'monthly',
  'special',
  'standard',
  'delayed',
];
const NOUNS = [
  'expense',
  'invoice',
  'travel',
  'purchase',
  'contract',
  'onboarding',
  'refund',
  'audit',
  'payroll',
  'renewal',
  'shipment',
  'claim',
  'budget',
  'order',
  'review',
  'request',
  'permit',
  'lease',
  'grant',
  'transfer',
];

const dataDir = mkdtempSync(join(tmpdir(), 'pal-bench-'));
const config = loadConfig({
  ...process.env,
  DATA_DIR: dataDir,
  PORT: '0',
  LOG_LEVEL: 'silent',
  PAGE_SIZE: '100',
  PAL_SECRET_KEY: '5e'.repeat(32),
  // The load generator is one client on one address: its limits must not be what is measured
  // (their cost still is, as on a real server).
  RATE_LIMIT_CLIENT_REQUESTS: '1000000000',
  RATE_LIMIT_ADDRESS_REQUESTS: '1000000000',
});
let auth = joining ? process.env.BENCH_AUTH! : '';
const workflowTransactions: string[] = [];
let sso = '';
/** The web-mode pal's transaction and the SSO that enters it (the session page's figures). */
let web = { transactionId: '', sso: '' };
const server = await startServer(config, {
  logger: false,
  prepare: async (domain) => {
    if (joining) return; // the first node seeded the database
    const enterprise = await createEnterprise(domain, 'bench');
    const client = await createClient(domain, enterprise.id);
    auth = `Basic ${Buffer.from(`${client.username}:${client.password}`).toString('base64')}`;
    const pals = join(ROOT, 'examples/pals');
    for (const folder of readdirSync(pals))
      await deployPal(domain, enterprise.id, join(pals, folder));
    await deployPal(domain, enterprise.id, await writeWebPal(dataDir));
    web = {
      transactionId: (await createTransaction(domain, enterprise.id, 'bench-web')).id,
      sso: await createSso(domain, enterprise.id, {
        firstName: 'Web',
        lastName: 'Person',
        email: 'web@example.test',
      }),
    };
    if (withWorkflows) {
      const folder = writeBenchPal(dataDir);
      await deployPal(domain, enterprise.id, folder);
      sso = await createSso(domain, enterprise.id, {
        firstName: 'Bench',
        lastName: 'Person',
        email: 'bench@example.test',
      });
      if (withHostile)
        await deployPal(
          domain,
          enterprise.id,
          join(ROOT, 'apps/server/test/fixtures/workflow-pals/wf-hostile'),
        );
      for (let i = 0; i < WORKFLOW_TRANSACTIONS; i++)
        workflowTransactions.push(
          (await createTransaction(domain, enterprise.id, 'bench-workflow')).id,
        );
    }
    if (count > 0) {
      // Copy every column of one real transaction; generate the rest inside SQLite.
      const model = await createTransaction(domain, enterprise.id, 'expense-approval');
      const row = await domain.db
        .selectFrom('transactions')
        .selectAll()
        .where('id', '=', model.id)
        .executeTakeFirstOrThrow();
      const columns = sql.raw(`id, enterprise_id, pal_id, pal_version, name, name_key,
        description, description_key, category, category_key, status, system_status,
        web_service_status, test, create_date, modified_date, execute_end_date, access_end_date,
        archive_end_date`);
      const copied = sql`${row.enterprise_id}, ${row.pal_id}, ${row.pal_version}, name, lower(name),
        ${row.description}, ${row.description_key}, ${row.category}, ${row.category_key},
        ${row.status}, ${row.system_status}, ${row.web_service_status}, 0, ${row.create_date},
        ${row.modified_date}, ${row.execute_end_date}, ${row.access_end_date},
        ${row.archive_end_date}`;
      const dialect = dialectOf(domain.db);
      if (dialect.name === 'sqlite') {
        const adjectives = sql.raw(`json('${JSON.stringify(ADJECTIVES)}')`);
        const nouns = sql.raw(`json('${JSON.stringify(NOUNS)}')`);
        await sql`
          with recursive n(i) as (select 1 union all select i + 1 from n where i < ${count}),
          named(i, name) as (
            select i, json_extract(${adjectives}, '$[' || (i % 10) || ']') || ' ' ||
                      json_extract(${nouns}, '$[' || ((i / 10) % 20) || ']') || ' ' || (i * 7919 % 1000003)
            from n)
          insert into transactions (${columns})
          select 'bench-' || i, ${copied} from named`.execute(domain.db);
      } else {
        // The same names; the trigram indexes are built once after the rows are in (much
        // faster than keeping them up to date row by row).
        const list = (words: string[]) => sql.raw(`array[${words.map((w) => `'${w}'`).join(',')}]`);
        await dialect.dropTransactionTextIndex(domain.db);
        await sql`
          insert into transactions (${columns})
          select 'bench-' || i, ${copied}
          from (
            select i, (${list(ADJECTIVES)})[(i % 10)::int + 1] || ' ' ||
                      (${list(NOUNS)})[((i / 10) % 20)::int + 1] || ' ' || (i * 7919 % 1000003) as name
            from generate_series(1::bigint, ${count}::bigint) as i) as named`.execute(domain.db);
        await dialect.createTransactionTextIndex(domain.db);
      }
      // PostgreSQL: vacuum too, so the visibility map lets index-only scans skip the table.
      await (dialect.name === 'sqlite' ? sql`analyze` : sql`vacuum analyze`).execute(domain.db);
    }
    // Last: the set-up's own events would go to it too, and the webhooks bench counts only the
    // loads'.
    if (webhook) await addWebhookEndpoint(domain, enterprise.id, { url: webhook });
  },
});

// The baseline: the very bytes the service answers, served by a bare route without authentication.
const baseline = Fastify({ logger: false });
const captured: Record<string, { type: string; body: string }> = {};
for (const [key, path, accept] of [
  ['p2-json', '/services/rest/pals/expense-approval', 'application/json'],
  ['p2-xml', '/services/rest/pals/expense-approval', 'application/xml'],
  ['p1-json', '/services/rest/pals', 'application/json'],
  ['p1-xml', '/services/rest/pals', 'application/xml'],
] as const) {
  const response = await fetch(`${server.url}${path}`, {
    headers: { authorization: auth, accept },
  });
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
  captured[key] = {
    type: response.headers.get('content-type') ?? accept,
    body: await response.text(),
  };
  baseline.get(`/${key}`, async (_request, reply) =>
    reply.type(captured[key]!.type).send(captured[key]!.body),
  );
}
const baselineUrl = await baseline.listen({ host: '127.0.0.1', port: 0 });

console.log(
  JSON.stringify({
    url: server.url,
    baselineUrl,
    auth,
    transactions: count,
    nouns: NOUNS,
    workflowTransactions,
    sso,
    web,
  }),
);

/**
 * The session page's bench pal: a 3-page A4 PDF with 20 fields of every type (7, 7 and 6 a page)
 * and two signatures, as an author would lay out a claim form.
 */
async function writeWebPal(dir: string): Promise<string> {
  const folder = join(dir, 'bench-web');
  mkdirSync(join(folder, 'documents'), { recursive: true });
  mkdirSync(join(folder, 'workflows'), { recursive: true });
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const types = ['TEXT', 'TEXTAREA', 'CHECKBOX', 'RADIO', 'SELECT', 'CHECKBOXCHECKED', 'TEXT'];
  const fields = [];
  for (let p = 1; p <= 3; p++) {
    const page = pdf.addPage([595, 842]);
    page.drawText(`Bench form, page ${p}`, { x: 60, y: 780, size: 18, font });
    for (let i = 0; i < (p === 3 ? 6 : 7); i++) {
      const type = types[i]!;
      const top = 120 + i * 90;
      page.drawText(`Field ${fields.length + 1}`, { x: 60, y: 842 - top - 14, size: 11, font });
      fields.push({
        id: `field${fields.length + 1}`,
        type,
        page: p,
        x: 200,
        y: top,
        width: type.startsWith('CHECKBOX') ? 16 : 300,
        height:
          type === 'TEXTAREA' || type === 'RADIO' ? 60 : type.startsWith('CHECKBOX') ? 16 : 22,
        ...(type === 'RADIO' || type === 'SELECT' ? { picklist: 'One|Two|Three' } : {}),
      });
    }
  }
  writeFileSync(join(folder, 'documents', 'form.pdf'), await pdf.save());
  writeFileSync(
    join(folder, 'workflows', 'transaction.js'),
    "export function submit() { return { messages: [{ message: 'ok' }] }; }\n",
  );
  const signature = (id: string, x: number) => ({
    id,
    role: 'participant',
    required: false,
    page: 3,
    x,
    y: 700,
    customWidth: 200,
    customHeight: 60,
  });
  writeFileSync(
    join(folder, 'pal.json'),
    JSON.stringify({
      id: 'bench-web',
      name: 'Bench web form',
      modes: { transaction: true, web: true },
      workflows: { transaction: 'workflows/transaction.js' },
      documents: [
        {
          file: 'documents/form.pdf',
          fields,
          signatures: [signature('first', 60), signature('second', 320)],
        },
      ],
      actions: { transaction: [{ name: 'submit', label: 'Submit' }] },
    }),
  );
  return folder;
}

/** A pal with the smallest workflows there are: T6 returns a message, C7 loops until its limit. */
function writeBenchPal(dir: string): string {
  const folder = join(dir, 'bench-workflow');
  mkdirSync(join(folder, 'workflows'), { recursive: true });
  writeFileSync(
    join(folder, 'pal.json'),
    JSON.stringify({
      id: 'bench-workflow',
      modes: { transaction: true, console: true },
      workflows: { transaction: 'workflows/transaction.js', console: 'workflows/console.js' },
    }),
  );
  writeFileSync(
    join(folder, 'workflows', 'transaction.js'),
    "export function runWorkflow(input) { return { messages: [{ message: 'ok ' + input.values.n }] }; }\n",
  );
  writeFileSync(
    join(folder, 'workflows', 'console.js'),
    'export function runWorkflow() { for (;;) {} }\n',
  );
  return folder;
}

const stop = async () => {
  await baseline.close();
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
