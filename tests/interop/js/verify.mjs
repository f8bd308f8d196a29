// Check cards with @a2a-js/sdk's own verifier (verifyAgentCardSignature). Our own code.
//
//   node verify.mjs CARDS.json JWKS.json    -> a JSON list of true/false on stdout
//
// CARDS.json is a JSON list of cards as served; JWKS.json a JWK Set whose keys are looked
// up by the signature's kid (the verifier's retrievePublicKey). One answer per card: true
// when the SDK's verifier accepts it, false when it throws.
import { readFileSync } from 'node:fs';
import { verifyAgentCardSignature } from '@a2a-js/sdk';

const [cardsPath, jwksPath] = process.argv.slice(2);
if (!jwksPath) throw new Error('usage: node verify.mjs CARDS.json JWKS.json');
const cards = JSON.parse(readFileSync(cardsPath, 'utf8'));
const { keys } = JSON.parse(readFileSync(jwksPath, 'utf8'));
console.debug = () => {}; // the SDK logs each failed entry there (stdout)

const verify = verifyAgentCardSignature(async (kid) => {
  const jwk = keys.find((k) => k.kid === kid);
  if (!jwk) throw new Error(`no key ${kid}`);
  return jwk;
});
const results = [];
for (const card of cards) {
  try {
    await verify(card);
    results.push(true);
  } catch {
    results.push(false);
  }
}
process.stdout.write(JSON.stringify(results) + '\n');
