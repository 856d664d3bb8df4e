// The failure converter of every client, worker and workflow of durable-inbox: a failure's message and
// stack trace go into history as an encoded payload (the message reads "Encoded failure"), so the payload
// codec seals them like every other payload, and the Web UI and `temporal workflow show` read them back
// through the codec server. The SDK loads it by path with require() in workers and clients, and the
// workflow bundle includes it, so it is CommonJS and uses no Node built-ins.
/* global require, exports */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { DefaultFailureConverter } = require('@temporalio/common');

exports.failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
