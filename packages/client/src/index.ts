export * from './generated/index.gen.js';
