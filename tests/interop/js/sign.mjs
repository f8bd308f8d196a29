// Sign a card with @a2a-js/sdk's own signer (generateAgentCardSignature). Our own code.
//
//   node sign.mjs CARD.json PRIVATE.jwk KID [ALG]    -> the signed card on stdout
//
// The card is signed as authored: what a JS agent does before serving it.
import { readFileSync } from 'node:fs';
import { generateAgentCardSignature } from '@a2a-js/sdk';

const [cardPath, keyPath, kid, alg = 'ES256'] = process.argv.slice(2);
if (!kid) throw new Error('usage: node sign.mjs CARD.json PRIVATE.jwk KID [ALG]');
const card = JSON.parse(readFileSync(cardPath, 'utf8'));
const jwk = JSON.parse(readFileSync(keyPath, 'utf8'));
const signed = await generateAgentCardSignature(jwk, { alg, kid, typ: 'JOSE' })(card);
process.stdout.write(JSON.stringify(signed) + '\n');
