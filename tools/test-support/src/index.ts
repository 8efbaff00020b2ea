export { expectError, type ErrorAnswer } from './expect-error.js';
export { SchemaValidator, SCHEMA_DIR, type XsdCheck } from './xsd-validator.js';
export { startSmtpListener, type ReceivedMail, type SmtpListener } from './smtp-listener.js';
export {
  createDatabaseAt,
  postgresBinDir,
  startPostgresCluster,
  type ClusterOptions,
  type PostgresCluster,
} from './postgres-cluster.js';
export { freePort } from './free-port.js';
export { greyPng } from './grey-png.js';
