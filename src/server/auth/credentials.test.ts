// Unit tests of the token format: no database, no HTTP.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TOKEN_BODY_LEN, hashSecret, issueToken, parseToken, secretMatches, type TokenKind } from './credentials.js';

const KINDS: TokenKind[] = ['lg_', 'lgs_', 'lgt_'];
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('issueToken', () => {
  test('an API key is lg_ followed by 50 base62 characters', () => {
    const { id, token, secretHash } = issueToken('lg_');
    assert.match(token, /^lg_[0-9A-Za-z]{50}$/);
    assert.equal(TOKEN_BODY_LEN, 50);
    assert.match(id, /^[0-9A-Za-z]{12}$/);
    assert.ok(token.startsWith(`lg_${id}`), 'the id follows the prefix');
    assert.match(secretHash, /^[0-9a-f]{64}$/, 'only a SHA-256 hex digest is kept');
    assert.ok(!token.includes(secretHash));
  });

  test('every kind carries its own prefix and the same body length', () => {
    for (const kind of KINDS) {
      const { token } = issueToken(kind);
      assert.ok(token.startsWith(kind), token);
      assert.equal(token.length, kind.length + 50);
      assert.match(token.slice(kind.length), /^[0-9A-Za-z]{50}$/);
    }
  });

  test('two issued tokens differ (id, secret and hash)', () => {
    const a = issueToken('lg_');
    const b = issueToken('lg_');
    assert.notEqual(a.token, b.token);
    assert.notEqual(a.id, b.id);
    assert.notEqual(a.secretHash, b.secretHash);
    const many = new Set(Array.from({ length: 200 }, () => issueToken('lgs_').token));
    assert.equal(many.size, 200);
  });
});

describe('parseToken', () => {
  test('accepts an issued token of every kind and returns its parts', () => {
    for (const kind of KINDS) {
      const issued = issueToken(kind);
      const parsed = parseToken(issued.token);
      assert.ok(parsed, `${kind} token must parse`);
      assert.equal(parsed.kind, kind);
      assert.equal(parsed.id, issued.id);
      assert.match(parsed.secret, /^[0-9A-Za-z]{32}$/);
      assert.equal(hashSecret(parsed.secret), issued.secretHash, 'the parsed secret is the one that was hashed');
      assert.ok(secretMatches(parsed.secret, issued.secretHash));
    }
  });

  test('a one-character change anywhere in the body is refused (checksum)', () => {
    for (const kind of KINDS) {
      const { token } = issueToken(kind);
      for (let i = kind.length; i < token.length; i++) {
        const c = token[i];
        // The next character of the alphabet: still base62, so only the checksum can catch it.
        const swapped = ALPHABET[(ALPHABET.indexOf(c) + 1) % ALPHABET.length];
        const changed = token.slice(0, i) + swapped + token.slice(i + 1);
        assert.equal(parseToken(changed), null, `${kind} change at ${i} (${c}→${swapped}) must be refused`);
      }
    }
  });

  test('two adjacent characters swapped are refused', () => {
    const { token } = issueToken('lg_');
    let tried = 0;
    for (let i = 3; i < token.length - 1; i++) {
      if (token[i] === token[i + 1]) continue;
      const changed = token.slice(0, i) + token[i + 1] + token[i] + token.slice(i + 2);
      assert.equal(parseToken(changed), null, `swap at ${i}`);
      tried++;
    }
    assert.ok(tried > 40);
  });

  test('a wrong length is refused', () => {
    const { token } = issueToken('lg_');
    assert.equal(parseToken(token.slice(0, -1)), null);
    assert.equal(parseToken(token + 'a'), null);
    assert.equal(parseToken(token.slice(0, 20)), null);
    assert.equal(parseToken(''), null);
    assert.equal(parseToken('lg_'), null);
  });

  test('a wrong or missing prefix is refused', () => {
    const { token } = issueToken('lg_');
    const body = token.slice('lg_'.length);
    assert.equal(parseToken(body), null);
    assert.equal(parseToken(`lgx_${body}`), null);
    assert.equal(parseToken(`LG_${body}`), null);
    assert.equal(parseToken(`sk_${body}`), null);
    assert.equal(parseToken(`lgs${body}`), null);
    // A valid body under another kind's prefix fails the checksum (the prefix is part of it).
    assert.equal(parseToken(`lgs_${body}`), null);
    assert.equal(parseToken(`lgt_${body}`), null);
  });

  test('characters outside base62 and surrounding whitespace are refused', () => {
    const { token } = issueToken('lg_');
    assert.equal(parseToken(` ${token}`), null);
    assert.equal(parseToken(`${token}\n`), null);
    assert.equal(parseToken(token.slice(0, 10) + '-' + token.slice(11)), null);
    assert.equal(parseToken(token.slice(0, 10) + '_' + token.slice(11)), null);
  });
});

describe('secretMatches', () => {
  test('true for the secret that was hashed, false for any other', () => {
    const issued = issueToken('lg_');
    const { secret } = parseToken(issued.token)!;
    assert.equal(secretMatches(secret, issued.secretHash), true);
    assert.equal(secretMatches(secret.slice(0, -1) + (secret.endsWith('a') ? 'b' : 'a'), issued.secretHash), false);
    assert.equal(secretMatches('', issued.secretHash), false);
    assert.equal(secretMatches(secret, issueToken('lg_').secretHash), false);
  });

  test('false (not a throw) for a stored hash that is malformed', () => {
    const { secret } = parseToken(issueToken('lg_').token)!;
    assert.equal(secretMatches(secret, ''), false);
    assert.equal(secretMatches(secret, 'abcd'), false);
    assert.equal(secretMatches(secret, 'not hex at all'), false);
  });
});
