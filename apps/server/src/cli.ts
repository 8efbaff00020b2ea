#!/usr/bin/env node
// The `pal` command line (apps/server's bin; from the repository root: `npx pal …`).
//
//   pal migrate
//   pal enterprise create NAME
//   pal client create --enterprise NAME [--username NAME]
//   pal client rotate --enterprise NAME USERNAME
//   pal client delete --enterprise NAME USERNAME
//   pal pal deploy FOLDER --enterprise NAME
//   pal pal list --enterprise NAME
//   pal run FOLDER --module NAME --export NAME [--input FILE] [--vars FILE]   (no database)
//   pal audit --enterprise NAME [--since WHEN]
//   pal webhook add|list|remove|rotate-secret|deliveries|redeliver …           (cli-webhooks.ts)
//
// Each takes --json and then prints exactly one JSON object on stdout (`pal audit`: one per
// record, one per line); otherwise it prints text.
// Commands that touch the database bring its schema up to date first. Any error (a bad setting
// too) prints one clear message on stderr and exits with status 1 (`pal run` exits 2 or 3 when the
// run itself does not succeed: RUN_EXIT_STATUS). Settings come from the
// environment, as for the server (docs/configuration.md).
//
// buildProgram() returns the commander program without running it; main.ts (the bin) adds the
// server's commands (serve, start) and runs the whole with runCli().
import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { Command, CommanderError } from 'commander';
import { destination, pino } from 'pino';
import { addAuditCommand } from './audit-command.js';
import { addWebhookCommands } from './cli-webhooks.js';
import {
  ConfigError,
  describeDatabase,
  loadConfig,
  WORKFLOW_LIMIT_RANGES,
  type Config,
} from './config.js';
import { createClient, deleteClientByUsername, rotateClientSecret } from './domain/clients.js';
import { createDomainContext, type DomainContext } from './domain/context.js';
import { checkPalWorkflows } from './workflows/deploy-check.js';
import { createEnterprise, getEnterpriseByName, type Enterprise } from './domain/enterprises.js';
import { isDomainError } from './domain/errors.js';
import { deployPal, listPals, type PalInfo } from './domain/pals.js';
import { runInScope } from './domain/request-scope.js';
import { connectDatabase } from './storage/database.js';
import { runLocally } from './workflows/local-run.js';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
}

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
};

interface JsonOption {
  json?: boolean;
}

/**
 * A reader that stops early (`pal audit | head`) closes the pipe: the rest of the answer is not
 * wanted, which is no failure of the command (it was an unhandled EPIPE and a stack). Any other
 * error of stdout stays one.
 */
function endWhenStdoutIsClosed(): void {
  if (process.stdout.listenerCount('error') > 0) return;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(0);
  });
}

/** Loads the settings, opens and migrates the database, and runs `work` in a domain context. */
export async function withDomain<T>(
  io: CliIo,
  work: (ctx: DomainContext, applied: string[]) => Promise<T>,
): Promise<T> {
  if (io === processIo) endWhenStdoutIsClosed();
  const config: Config = loadConfig(io.env);
  // Logs go to stderr, so stdout holds only the command's answer. Quiet unless LOG_LEVEL says so.
  const log = pino({ level: io.env.LOG_LEVEL ? config.logLevel : 'warn' }, destination(2));
  const { db, applied } = await connectDatabase(config);
  try {
    const ctx = createDomainContext({ db, config, log, checkWorkflows: checkPalWorkflows });
    try {
      return await runInScope({ actor: { type: 'operator', id: operatorName(io) } }, () =>
        work(ctx, applied),
      );
    } finally {
      ctx.mailer.close();
    }
  } finally {
    await db.destroy();
  }
}

/** Who runs the CLI, as audit records name the operator: the login, else $USER. */
function operatorName(io: CliIo): string | null {
  try {
    return userInfo().username;
  } catch {
    return io.env.USER ?? null;
  }
}

function modesOf(pal: PalInfo): string {
  const modes = [
    pal.modeTransaction && 'transaction',
    pal.modeConsole && 'console',
    pal.modeWeb && 'web',
  ].filter(Boolean);
  return modes.length > 0 ? modes.join('+') : '-';
}

function palTable(pals: PalInfo[]): string {
  if (pals.length === 0) return 'No pals deployed.\n';
  const rows = [
    ['ID', 'NAME', 'CATEGORY', 'MODES', 'MODIFIED'],
    ...pals.map((p) => [
      p.id,
      p.name ?? '',
      p.category ?? '',
      modesOf(p),
      p.lastModifiedDate ?? '',
    ]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return (
    rows
      .map((r) =>
        r
          .map((cell, i) => cell.padEnd(widths[i]))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** The `pal` program, with every command but serve and start. */
export function buildProgram(io: CliIo = processIo): Command {
  const print = (options: JsonOption, json: object, text: string) =>
    io.stdout(
      options.json ? `${JSON.stringify(json)}\n` : text.endsWith('\n') ? text : `${text}\n`,
    );

  const program = new Command('pal')
    .description('Pal Workflow Services: database, tenants, API clients and pals')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError()
    .exitOverride();

  program
    .command('migrate')
    .description('bring the database schema up to date')
    .option('--json', 'print one JSON object')
    .action(async (options: JsonOption) => {
      await withDomain(io, async (ctx, applied) => {
        const where = describeDatabase(ctx.config.database);
        print(
          options,
          { applied, database: where },
          applied.length > 0
            ? `Applied ${applied.join(', ')} to ${where}.`
            : `The database ${where} is up to date.`,
        );
      });
    });

  const enterprise = program.command('enterprise').description('manage enterprises (tenants)');
  enterprise
    .command('create')
    .description('create an enterprise')
    .argument('<name>', 'its unique name')
    .option('--json', 'print one JSON object')
    .action(async (name: string, options: JsonOption) => {
      await withDomain(io, async (ctx) => {
        const created = await createEnterprise(ctx, name);
        print(
          options,
          { id: created.id, name: created.name },
          `Created enterprise "${created.name}" (id ${created.id}).`,
        );
      });
    });

  const client = program.command('client').description('manage API clients (BASIC credentials)');
  client
    .command('create')
    .description('create an API client; its password is shown only this once')
    .requiredOption('--enterprise <name>', 'the enterprise it acts for')
    .option('--username <username>', 'its BASIC user name (default: made from the enterprise name)')
    .option('--json', 'print one JSON object')
    .action(async (options: JsonOption & { enterprise: string; username?: string }) => {
      await withDomain(io, async (ctx) => {
        const owner = await getEnterpriseByName(ctx, options.enterprise);
        const created = await createClient(ctx, owner.id, { username: options.username });
        print(
          options,
          { enterprise: owner.name, username: created.username, password: created.password },
          [
            `Created an API client for enterprise "${owner.name}".`,
            `  username: ${created.username}`,
            `  password: ${created.password}`,
            'Store the password now: it cannot be shown again.',
          ].join('\n'),
        );
      });
    });

  /** A command on one client of an enterprise: `pal client NAME --enterprise E USERNAME`. */
  const onClient = (
    name: string,
    description: string,
    work: (
      ctx: DomainContext,
      owner: Enterprise,
      username: string,
      options: JsonOption,
    ) => Promise<void>,
  ) =>
    client
      .command(name)
      .description(description)
      .requiredOption('--enterprise <name>', 'the enterprise it acts for')
      .argument('<username>', 'its BASIC user name')
      .option('--json', 'print one JSON object')
      .action(async (username: string, options: JsonOption & { enterprise: string }) => {
        await withDomain(io, async (ctx) =>
          work(ctx, await getEnterpriseByName(ctx, options.enterprise), username, options),
        );
      });
  onClient(
    'rotate',
    'give an API client a new password, shown only this once; the old one keeps working for ' +
      'CLIENT_SECRET_GRACE_SECONDS (default 24 h; 0 for a leaked password: it stops at once)',
    async (ctx, owner, username, options) => {
      const rotated = await rotateClientSecret(ctx, owner.id, username);
      print(
        options,
        { enterprise: owner.name, ...rotated },
        [
          `Rotated the password of API client "${rotated.username}" of enterprise "${owner.name}".`,
          `  username: ${rotated.username}`,
          `  password: ${rotated.password}`,
          ctx.config.clientSecretGraceSeconds > 0
            ? `The old password keeps working until ${rotated.oldPasswordExpiresAt} (CLIENT_SECRET_GRACE_SECONDS).`
            : 'The old password stopped working now.',
          'Store the new password now: it cannot be shown again.',
        ].join('\n'),
      );
    },
  );
  onClient(
    'delete',
    'delete an API client: its credentials stop working at once, on every node',
    async (ctx, owner, username, options) => {
      await deleteClientByUsername(ctx, owner.id, username);
      print(
        options,
        { enterprise: owner.name, username, deleted: true },
        `Deleted API client "${username}" of enterprise "${owner.name}"; its credentials no longer work.`,
      );
    },
  );

  const pal = program.command('pal').description('deploy and list pals');
  pal
    .command('deploy')
    .description(
      'deploy the pal in FOLDER (its pal.json and files); the same id again is a new version',
    )
    .argument('<folder>', 'the pal folder')
    .requiredOption('--enterprise <name>', 'the enterprise to deploy to')
    .option('--json', 'print one JSON object')
    .action(async (folder: string, options: JsonOption & { enterprise: string }) => {
      await withDomain(io, async (ctx) => {
        const owner = await getEnterpriseByName(ctx, options.enterprise);
        const deployed = await deployPal(ctx, owner.id, folder);
        // Deployed all the same: what the author would want to know (docs/pal-format.md).
        for (const warning of deployed.warnings ?? []) io.stderr(`warning: ${warning}\n`);
        const label = deployed.name ? ` (${deployed.name})` : '';
        print(
          options,
          { id: deployed.id, name: deployed.name },
          `Deployed pal "${deployed.id}"${label} to "${owner.name}" as version ${deployed.version}.`,
        );
      });
    });
  pal
    .command('list')
    .description("list an enterprise's pals, test and installed ones included")
    .requiredOption('--enterprise <name>', 'the enterprise')
    .option('--json', 'print one JSON object')
    .action(async (options: JsonOption & { enterprise: string }) => {
      await withDomain(io, async (ctx) => {
        const owner = await getEnterpriseByName(ctx, options.enterprise);
        const pals = await listPals(ctx, owner.id);
        print(options, { pals }, palTable(pals));
      });
    });

  program
    .command('run')
    .description(
      "run one export of a pal folder's workflow module on an input file, without a server: " +
        'prints the answer of the matching operation (C7, C2, C5, T6, T9, U1) and what the run would keep; ' +
        'exits 2 when the run fails or the server would refuse the input, 3 when the workflow answers success: false',
    )
    .argument('<folder>', 'the pal folder')
    .requiredOption('--module <name>', 'the workflow module: console, transaction, user, …')
    .requiredOption('--export <name>', 'the export to call: runWorkflow, run, an action, …')
    .option(
      '--input <file>',
      'the request body in JSON (ConsoleContent, TransactionContent, ServiceRequest; C5: {"text", "contentType"})',
    )
    .option('--vars <file>', 'the variables the run starts with, a JSON object of strings')
    .option('--timeout-ms <ms>', 'the time limit', '1000')
    .option('--memory-mb <mb>', 'the memory limit', '64')
    .option('--json', 'print one JSON object')
    .action(
      async (
        folder: string,
        options: JsonOption & {
          module: string;
          export: string;
          input?: string;
          vars?: string;
          timeoutMs: string;
          memoryMb: string;
        },
      ) => {
        const result = await runLocally(folder, {
          module: options.module,
          exportName: options.export,
          input: options.input === undefined ? undefined : await readText(options.input),
          inputFile: options.input,
          vars:
            options.vars === undefined
              ? {}
              : ((await readJson(options.vars)) as Record<string, string>),
          // As WORKFLOW_TIMEOUT_MS and WORKFLOW_MEMORY_MB: a run here is what it is on the server.
          timeoutMs: wholeNumber(
            '--timeout-ms',
            options.timeoutMs,
            WORKFLOW_LIMIT_RANGES.timeoutMs,
          ),
          memoryMb: wholeNumber('--memory-mb', options.memoryMb, WORKFLOW_LIMIT_RANGES.memoryMb),
        });
        const text = [
          `${result.operation}: ${result.status}`,
          JSON.stringify(result.response, null, 2),
          ...(result.logs.length > 0 ? ['', 'pal.log:', ...result.logs.map((l) => `  ${l}`)] : []),
          ...(result.effects
            ? ['', 'kept when run by the service:', JSON.stringify(result.effects, null, 2)]
            : []),
        ].join('\n');
        print(options, result, text);
        // So that a script or CI can tell (docs/workflows.md, "Run it locally").
        if (result.outcome !== 'succeeded') throw new ExitStatus(RUN_EXIT_STATUS[result.outcome]);
      },
    );

  addAuditCommand(program, (work) => withDomain(io, work), io.stdout);
  addWebhookCommands(program, { print, withDomain: (work) => withDomain(io, work) });

  return program;
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`);
  }
}

async function readJson(file: string): Promise<unknown> {
  const text = await readText(file);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new Error(`${file}: ${(error as Error).message}`);
  }
}

/**
 * `pal run`'s exit status when the run did not succeed: 2 when the server would refuse the input
 * (400) or the run fails (NO_WORKFLOW, WORKFLOW_ERROR, …), 3 when the workflow answers
 * `success: false`. (1 stays every error of the command itself.)
 */
const RUN_EXIT_STATUS = { failed: 2, refused: 3 } as const;

/** Ends a command that has printed its answer with an exit status other than 0. */
class ExitStatus extends Error {
  constructor(readonly status: number) {
    super(`exit status ${status}`);
  }
}

/** A whole number from `min` to `max`: the bounds the server's own setting has (config.ts). */
function wholeNumber(option: string, value: string, [min, max]: readonly [number, number]): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value.trim()) || parsed < min || parsed > max)
    throw new Error(`${option}: expected a whole number from ${min} to ${max}, got "${value}"`);
  return parsed;
}

/**
 * Runs the program on `argv` (as process.argv: node, script, arguments…); returns the exit status.
 * Errors are printed on stderr as one message: 0 on success, 1 on any error; `pal run` answers 2
 * or 3 when the run does not succeed (RUN_EXIT_STATUS).
 */
export async function runCli(
  argv: readonly string[] = process.argv,
  program: Command = buildProgram(),
  io: CliIo = processIo,
): Promise<number> {
  try {
    await program.parseAsync([...argv]);
    return 0;
  } catch (error) {
    if (error instanceof ExitStatus) return error.status;
    if (error instanceof CommanderError) {
      // Commander has printed its message (or the help) already.
      return error.exitCode === 0 ? 0 : 1;
    }
    if (error instanceof ConfigError) {
      io.stderr(`error: bad setting ${error.message}\n`);
    } else if (isDomainError(error)) {
      io.stderr(`error: ${error.message}\n`);
    } else {
      io.stderr(`error: ${(error as Error)?.message ?? String(error)}\n`);
      if (io.env.LOG_LEVEL === 'debug' || io.env.LOG_LEVEL === 'trace') {
        io.stderr(`${(error as Error)?.stack ?? ''}\n`);
      }
    }
    return 1;
  }
}
