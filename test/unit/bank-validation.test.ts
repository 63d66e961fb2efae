import { address, generateKeyPairSigner, getProgramDerivedAddress } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { abaRoutingError, bicCheck, burnAddressError, clabeError, cryptoAddressError, ibanCheck } from '../../src/domain/bank-validation';

// Published real-world examples: Federal Reserve routing numbers of large banks, the IBAN registry's
// examples, EIP-55's test vectors, BIP addresses, well-known program / contract / documentation addresses.

test.each(['011000015', '021000021', '026009593', '121000358', '322271627', '111000025'])('ABA %s is valid', (r) => {
  expect(abaRoutingError(r)).toBeNull();
});
test.each([
  ['021000022', /checksum/], ['123456789', /checksum/], ['991000021', /prefix/], ['02100002', /9 digits/], ['02100002a', /9 digits/],
])('ABA %s is refused', (r, why) => {
  expect(abaRoutingError(r)).toMatch(why);
});

test.each(['002010077777777771', '032180000118359719'])('CLABE %s is valid', (c) => expect(clabeError(c)).toBeNull());
test.each([['002010077777777772', /control digit/], ['0020100777777777', /18 digits/]])('CLABE %s is refused', (c, why) => {
  expect(clabeError(c)).toMatch(why);
});

test.each([
  ['DE89370400440532013000', 'DE'], ['GB82 WEST 1234 5698 7654 32', 'GB'], ['FR1420041010050500013M02606', 'FR'],
  ['NL91ABNA0417164300', 'NL'], ['ES9121000418450200051332', 'ES'], ['CH9300762011623852957', 'CH'], ['be68539007547034', 'BE'],
])('IBAN %s is valid (%s)', (iban, country) => {
  expect(ibanCheck(iban)).toEqual({ iban: iban.replace(/\s/g, '').toUpperCase(), country });
});
test.each(['GB82WEST12345698765433', 'DE8937040044053201300', 'XX89370400440532013000', 'DE89'])('IBAN %s is refused', (iban) => {
  expect(ibanCheck(iban)).toHaveProperty('error');
});

test.each([['DEUTDEFF', 'DE'], ['DEUTDEFF500', 'DE'], ['NWBKGB2L', 'GB'], ['BNPAFRPP', 'FR']])('BIC %s is valid', (bic, country) => {
  expect(bicCheck(bic)).toEqual({ bic, country });
});
test.each(['DEUT1EFF', 'DEUTDE', 'DEUTDEFF5'])('BIC %s is refused', (bic) => expect(bicCheck(bic)).toHaveProperty('error'));

test.each([
  ['ethereum', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'],
  ['base', '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359'],
  ['polygon', '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB'],
  ['arbitrum', '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb'],
  ['optimism', '0x5aaeb6053f3e94c9b9a09f33669435e7ef1beaed'],
  ['solana', 'So11111111111111111111111111111111111111112'],
  ['solana', 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA'],
  ['bitcoin', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa'],
  ['bitcoin', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy'],
  ['bitcoin', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'],
  ['bitcoin', 'bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297'],
  ['tron', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'],
  ['stellar', 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7'],
  ['stellar', 'GA5ZSEJYB37JRC5AVCIA5MOP4RHTM335X2KGX3IHOJAPP5RE34K4KZVN'],
] as const)('%s address %s is valid', (chain, address) => {
  expect(cryptoAddressError(chain, address)).toBeNull();
});

test.each([
  ['ethereum', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', /EIP-55/],
  ['ethereum', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeA', /40 hexadecimal/],
  ['solana', '0OIl1111', /solana/],
  ['solana', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', /32-byte/],
  ['bitcoin', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNb', /bitcoin/],
  ['bitcoin', '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed', /bitcoin/],
  ['tron', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u', /tron/],
  ['stellar', 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN6', /checksum/],
] as const)('%s address %s is refused', (chain, address, why) => {
  expect(cryptoAddressError(chain, address)).toMatch(why);
});

test('a Solana payee off the ed25519 curve (a program-derived address, such as an associated token account) is refused; a key\'s owner is not', async () => {
  const owner = await generateKeyPairSigner();
  const [tokenAccount] = await findAssociatedTokenPda({ owner: owner.address, mint: address('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v'), tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const [vault] = await getProgramDerivedAddress({ programAddress: TOKEN_PROGRAM_ADDRESS, seeds: ['vault'] });
  for (const pda of [tokenAccount, vault]) {
    expect(cryptoAddressError('solana', pda)).toBeNull();
    expect(burnAddressError('solana', pda)).toMatch(/off the ed25519 curve \(a program-derived address\)/);
  }
  expect(burnAddressError('solana', owner.address)).toBeNull();
});
