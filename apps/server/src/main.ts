#!/usr/bin/env node
// The `pal` bin: the CLI of cli.ts plus the server's own commands.
//
//   pal serve     migrate the database and serve on HOST:PORT
//   pal start     what `npm start` runs: migrate, set up the demo enterprise (its pals from
//                 examples/pals, an API client whose credentials are printed and written to
//                 DATA_DIR/demo-client.txt), then serve
import { buildProgram, runCli } from './cli.js';
import { loadConfig } from './config.js';
import { ensureDemo } from './domain/demo.js';
import { startServer } from './server.js';

const program = buildProgram();

program
  .command('serve')
  .description('migrate the database and serve the API on HOST:PORT')
  .action(async () => {
    const config = loadConfig(process.env);
    await startServer(config, { handleSignals: true });
  });

program
  .command('start')
  .description('set up the demo enterprise (pals, API client) and serve: what `npm start` runs')
  .action(async () => {
    const config = loadConfig(process.env);
    let banner = '';
    const server = await startServer(config, {
      handleSignals: true,
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
    });
    process.stdout.write(`${banner}Listening on ${server.url}\n\n`);
  });

process.exitCode = await runCli(process.argv, program);
