// Sign card-*.json with @a2a-js/sdk 1.3.0's own signer; write js-signed-*.json.
//
// node_modules stays outside the repository. From a scratch folder:
//
//   mkdir /tmp/js-sign && cd /tmp/js-sign && npm init -y && npm install @a2a-js/sdk@1.3.0
//   node <repo>/tests/data/sdk-signed/sign_js.mjs <repo>/tests/data/sdk-signed
//
// The SDK is resolved from the current directory's node_modules. The card JSON is given
// to generateAgentCardSignature as authored; the signer returns it with the signature
// appended, which is what a JS agent serves.
import { createRequire } from "node:module";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const require = createRequire(join(process.cwd(), "noop.js"));
const { generateAgentCardSignature } = require("@a2a-js/sdk");
const { importJWK } = require("jose");

const dir = process.argv[2];
const jwk = JSON.parse(readFileSync(join(dir, "TEST-ONLY-js-ed25519.private.jwk.json"), "utf8"));
const key = await importJWK(jwk, "EdDSA");
const sign = generateAgentCardSignature(key, { alg: "EdDSA", kid: "js-ed25519", typ: "JOSE" });

for (const name of readdirSync(dir).filter((n) => /^card-.*\.json$/.test(n)).sort()) {
  const authored = JSON.parse(readFileSync(join(dir, name), "utf8"));
  const signed = await sign(authored);
  const out = name.replace("card-", "js-signed-");
  writeFileSync(join(dir, out), JSON.stringify(signed, null, 2) + "\n");
}
