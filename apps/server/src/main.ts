#!/usr/bin/env node
// The `pal` bin: the CLI of cli.ts plus the server's own commands.
//
//   pal serve     migrate the database and serve on HOST:PORT
//   pal start     what `npm start` runs: migrate, set up the demo enterprise (its pals from
//                 examples/pals, an API client whose credentials are printed and written to
//                 DATA_DIR/demo-client.txt), then serve
//
// With SERVER_PROCESSES above 1, both run as the primary of that many server processes
// (server-processes.ts); each of those runs this file again, and serves.
import cluster from 'node:cluster';
import { buildProgram, runCli } from './cli.js';
import { loadConfig, type Config } from './config.js';
import type { DomainContext } from './domain/context.js';
import { ensureDemo } from './domain/demo.js';
import { runServerProcesses } from './server-processes.js';
import { startServer } from './server.js';
import { lockSqliteServer, type SqliteServerLock } from './storage/sqlite-server-lock.js';

const serverLocks: SqliteServerLock[] = [];

const program = buildProgram();

program
  .command('serve')
  .description('migrate the database and serve the API on HOST:PORT')
  .action(async () => {
    await serve(loadConfig(process.env));
  });

program
  .command('start')
  .description('set up the demo enterprise (pals, API client) and serve: what `npm start` runs')
  .action(async () => {
    const config = loadConfig(process.env);
    let banner = '';
    await serve(config, {
      prepare: async (domain) => {
        const demo = await ensureDemo(domain);
        const base = config.publicUrl;
        banner = [
          '',
          `Pal Workflow Services, demo enterprise "${demo.enterprise.name}" with pals: ${demo.pals.map((p) => p.id).join(', ')}`,
          `API client (BASIC):  ${demo.username} / ${demo.password}`,
          `                     also in ${demo.credentialsFile}`,
          `Try:  curl -u "$(cat ${demo.credentialsFile})" ${base}/${config.serviceRoot}/rest/pals`,
          `API reference: ${base}/docs    OpenAPI: ${base}/openapi.json`,
          '',
        ].join('\n');
      },
      onListening: (url) => process.stdout.write(`${banner}Listening on ${url}\n\n`),
    });
  });

/**
 * One server, or (SERVER_PROCESSES above 1) the primary of several; in a server process of that
 * primary, the server alone: the primary has migrated and prepared already.
 */
async function serve(
  config: Config,
  options: {
    prepare?: (domain: DomainContext) => Promise<void>;
    onListening?: (url: string) => void;
  } = {},
): Promise<void> {
  if (cluster.isWorker) {
    await startServer(config, { handleSignals: true });
    return;
  }
  if (config.serverProcesses > 1) {
    await runServerProcesses(config, options);
    return;
  }
  // Held until the process ends (the list keeps the connection from being collected, which
  // would close it): the operating system releases it then, however the process ends.
  if (config.database.kind === 'sqlite') serverLocks.push(lockSqliteServer(config.database.path));
  const server = await startServer(config, { handleSignals: true, prepare: options.prepare });
  options.onListening?.(server.url);
}

process.exitCode = await runCli(process.argv, program);
// A server process whose server could not start must end (its channel to the primary would keep it
// alive): the primary learns of the failure from its exit.
if (cluster.isWorker && process.exitCode !== 0) process.exit();
