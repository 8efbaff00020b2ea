// `pal webhook …`: an enterprise's webhook endpoints (docs/events.md).
//
//   pal webhook add URL --enterprise NAME [--events TYPE,…]   the secret is shown this once
//   pal webhook list --enterprise NAME
//   pal webhook remove ID
//   pal webhook rotate-secret ID                             the old secret signs for a while too
//   pal webhook deliveries ID                                an endpoint's latest messages
//   pal webhook redeliver MESSAGE_ID                         a finished message sent again
import type { Command } from 'commander';
import type { DomainContext } from './domain/context.js';
import { getEnterpriseByName } from './domain/enterprises.js';
import { EVENT_TYPES } from './domain/events.js';
import {
  addWebhookEndpoint,
  listDeliveries,
  listEndpoints,
  redeliver,
  removeEndpoint,
  rotateEndpointSecret,
  type WebhookDelivery,
  type WebhookEndpoint,
} from './domain/webhooks.js';

interface JsonOption {
  json?: boolean;
}

/** What cli.ts lends the commands: its printer and its way into the database. */
export interface CliKit {
  print(options: JsonOption, json: object, text: string): void;
  withDomain<T>(work: (ctx: DomainContext) => Promise<T>): Promise<T>;
}

function eventsOf(endpoint: WebhookEndpoint): string {
  return endpoint.events === '*' ? 'all' : endpoint.events.join(',');
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function deliveryLine(d: WebhookDelivery): string[] {
  const when = d.status === 'pending' ? `next ${d.nextAttemptAt ?? ''}` : (d.finishedAt ?? '');
  return [d.id, d.type, d.status, String(d.attempts), when, d.lastError ?? ''];
}

export function addWebhookCommands(program: Command, kit: CliKit): void {
  const webhook = program
    .command('webhook')
    .description("manage an enterprise's webhook endpoints (Standard Webhooks)");

  webhook
    .command('add')
    .description('add an endpoint; its signing secret is shown only this once')
    .argument('<url>', 'where events are POSTed (http:// or https://)')
    .requiredOption('--enterprise <name>', 'the enterprise whose events it receives')
    .option(
      '--events <types>',
      `the event types it receives, comma-separated (default: all): ${EVENT_TYPES.join(', ')}`,
    )
    .option('--json', 'print one JSON object')
    .action(async (url: string, options: JsonOption & { enterprise: string; events?: string }) => {
      await kit.withDomain(async (ctx) => {
        const owner = await getEnterpriseByName(ctx, options.enterprise);
        const events = options.events?.split(/[\s,]+/).filter((e) => e !== '');
        const added = await addWebhookEndpoint(ctx, owner.id, { url, events });
        kit.print(
          options,
          { id: added.id, url: added.url, secret: added.secret },
          [
            `Added webhook endpoint ${added.id} for enterprise "${owner.name}".`,
            `  url:    ${added.url}`,
            `  events: ${eventsOf(added)}`,
            `  secret: ${added.secret}`,
            'Store the secret now: it cannot be shown again.',
          ].join('\n'),
        );
      });
    });

  webhook
    .command('list')
    .description("list an enterprise's webhook endpoints")
    .requiredOption('--enterprise <name>', 'the enterprise')
    .option('--json', 'print one JSON object')
    .action(async (options: JsonOption & { enterprise: string }) => {
      await kit.withDomain(async (ctx) => {
        const owner = await getEnterpriseByName(ctx, options.enterprise);
        const endpoints = await listEndpoints(ctx, owner.id);
        const text =
          endpoints.length === 0
            ? 'No webhook endpoints.'
            : table([
                ['ID', 'URL', 'EVENTS', 'CREATED'],
                ...endpoints.map((e) => [e.id, e.url, eventsOf(e), e.createdAt]),
              ]);
        kit.print(options, { endpoints }, text);
      });
    });

  webhook
    .command('remove')
    .description('remove an endpoint, and every message still waiting for it')
    .argument('<id>', 'the endpoint id (ep_…)')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: JsonOption) => {
      await kit.withDomain(async (ctx) => {
        await removeEndpoint(ctx, id);
        kit.print(options, { id, removed: true }, `Removed webhook endpoint ${id}.`);
      });
    });

  webhook
    .command('rotate-secret')
    .description('give an endpoint a new secret; the old one still signs during the overlap')
    .argument('<id>', 'the endpoint id (ep_…)')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: JsonOption) => {
      await kit.withDomain(async (ctx) => {
        const rotated = await rotateEndpointSecret(ctx, id);
        kit.print(
          options,
          rotated,
          [
            `New secret of webhook endpoint ${id}:`,
            `  secret: ${rotated.secret}`,
            `The old secret signs too until ${rotated.previousSecretUntil}.`,
            'Store the secret now: it cannot be shown again.',
          ].join('\n'),
        );
      });
    });

  webhook
    .command('deliveries')
    .description("an endpoint's latest messages, newest first, with their state")
    .argument('<id>', 'the endpoint id (ep_…)')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: JsonOption) => {
      await kit.withDomain(async (ctx) => {
        const deliveries = await listDeliveries(ctx, id);
        const text =
          deliveries.length === 0
            ? 'No messages.'
            : table([
                ['ID', 'TYPE', 'STATUS', 'ATTEMPTS', 'WHEN', 'LAST ERROR'],
                ...deliveries.map(deliveryLine),
              ]);
        kit.print(options, { deliveries }, text);
      });
    });

  webhook
    .command('redeliver')
    .description('send a failed (or delivered) message again, with the same webhook-id')
    .argument('<id>', 'the message id (msg_…), as `pal webhook deliveries` shows it')
    .option('--json', 'print one JSON object')
    .action(async (id: string, options: JsonOption) => {
      await kit.withDomain(async (ctx) => {
        const delivery = await redeliver(ctx, id);
        kit.print(options, delivery, `Message ${id} will be sent again.`);
      });
    });
}
