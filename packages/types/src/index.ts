export * from './generated/types.gen.js';
