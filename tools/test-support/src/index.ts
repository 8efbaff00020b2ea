export { SchemaValidator, SCHEMA_DIR, type XsdCheck } from './xsd-validator.js';
