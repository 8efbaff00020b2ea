// What tools/bench drives in-process, named here so the bench depends on a declared surface of
// the app (`@pal-workflow/server/bench`) instead of reaching into its folders: start a server,
// seed it through the domain, and run the sandbox alone.
export { CONFIG_DEFAULTS, loadConfig } from './config.js';
export { createClient } from './domain/clients.js';
export { createEnterprise } from './domain/enterprises.js';
export { deployPal } from './domain/pals.js';
export { createSso } from './domain/ssos.js';
export { TRANSACTION_EVENTS } from './domain/transaction-lifecycle.js';
export { createTransaction } from './domain/transactions.js';
export { startServer } from './server.js';
export { addWebhookEndpoint } from './domain/webhooks.js';
export { loadSandboxModule, Sandbox } from './workflows/sandbox.js';
export { DRIVER_SOURCE } from './workflows/driver.js';
export { codeKeyOf } from './workflows/job.js';
export { dialectOf } from './storage/adapter-dialect.js';
export { writeCompletedPdf } from './documents/completion.js';
export type { CompletionInput } from './documents/completed-pdf.js';
