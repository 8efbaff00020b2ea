export * from './generated/types.gen.js';
export type {
  ConsoleInput,
  ConsoleReturn,
  ExecuteWorkflowInput,
  NameValueReturn,
  Pal,
  PalMail,
  PalRole,
  PalRoles,
  PalTransaction,
  PalVars,
  RunInputBase,
  TransactionInput,
  TransactionReturn,
  UserInput,
  UserReturn,
} from './workflow-api.js';
