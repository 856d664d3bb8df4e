// What an operator surface (the CLI, the MCP server) is told when a request cannot be carried out
// as asked: a bad argument, an unknown id. Nothing was changed; the message says why.
export class InvalidRequest extends Error {}
