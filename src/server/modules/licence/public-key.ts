// The vendor's licence public key, built into the release. Its private half is kept by the
// vendor outside the repository (made with `npm run licence -- keygen`). LICENCE_PUBLIC_KEY
// overrides it (tests sign with their own pair).
export const BUILT_IN_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAWaaPfR9SszdqnOjxUmTGcruSsA61YLXbzn1nuDpRIrU=
-----END PUBLIC KEY-----`;
