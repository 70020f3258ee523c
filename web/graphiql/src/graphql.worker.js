// The GraphQL language worker (monaco-graphql): completion, validation.
import 'monaco-graphql/esm/graphql.worker.js';
