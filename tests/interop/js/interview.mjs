// The README's JavaScript recipe, run by the interop suite (tests/interop). Our own code.
//
//   node interview.mjs --card-url URL --question Q [--skill ID]
//
// Asks one interview question with @a2a-js/sdk 1.x: the client made as usual by its
// ClientFactory (JSON-RPC interfaces only: the SDK's REST transport has no extension
// call, so an HTTP+JSON agent is asked with a plain fetch of GET {url}/interview/{Q}),
// then `client.transport.callExtensionMethod`, which the SDK implements but leaves out
// of its .d.ts (TypeScript: cast the transport). Activation and the version are headers
// the caller sets: the transport method bypasses the client's own header handling.
// Prints the JSON-RPC result (the answer, or the standard refusal) as one JSON line.
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  ServiceParameters,
  withA2AExtensions,
  withA2AVersion,
} from '@a2a-js/sdk/client';
import { AgentCard } from '@a2a-js/sdk';

const INTERVIEW = 'https://agentsow.com/extensions/a2a-interview/v1';

function parseArgs(argv) {
  const args = {};
  for (let i = 0; i < argv.length; i += 2) args[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const name of ['card-url', 'question']) {
    if (!args[name]) throw new Error(`--${name} is required`);
  }
  return args;
}

const args = parseArgs(process.argv.slice(2));
const cardUrl = args['card-url'];
const method = `interview/${args.question}`;
const params = args.skill ? { skill: args.skill } : {};

// --- the recipe -------------------------------------------------------------------------
const response = await fetch(cardUrl, { headers: { 'A2A-Version': '1.0' } });
const card = AgentCard.fromJSON(await response.json());
card.supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolBinding === 'JSONRPC');
const factory = new ClientFactory({
  ...ClientFactoryOptions.default,
  transports: [new JsonRpcTransportFactory()],
});
const client = await factory.createFromAgentCard(card);
const serviceParameters = ServiceParameters.create(
  withA2AExtensions(INTERVIEW),
  withA2AVersion('1.0'),
);
const reply = await client.transport.callExtensionMethod(method, params, { serviceParameters });
reply.result; // the answer, or the standard refusal; a JSON-RPC error is thrown instead
// --- end of the recipe ------------------------------------------------------------------

process.stdout.write(JSON.stringify(reply.result) + '\n');
