import { createHash } from 'node:crypto';
import { base32, base58, base58check } from '@scure/base';
import { Address, NETWORK, TEST_NETWORK } from '@scure/btc-signer';
import { extractIBAN, isValidBIC } from 'ibantools';
import { address as solanaAddress, isOffCurveAddress } from '@solana/kit';
import { isAddress } from 'viem';
import { isEvmChain, type CryptoChain, type SimulatedChain } from './rails';

/**
 * Account-number checks that catch real mistakes at the edge. Each returns null when valid, or
 * the reason it is not.
 */

/** ABA routing number: 9 digits, a Federal Reserve prefix, and the 3-7-1 checksum. */
export function abaRoutingError(routing: string): string | null {
  if (!/^\d{9}$/.test(routing)) return 'must be 9 digits';
  const prefix = Number(routing.slice(0, 2));
  const validPrefix = (prefix >= 0 && prefix <= 12) || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
  if (!validPrefix) return 'is not a valid ABA routing number (unknown Federal Reserve prefix)';
  const d = routing.split('').map(Number);
  const sum = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8]);
  return sum % 10 === 0 ? null : 'is not a valid ABA routing number (checksum)';
}

/** CLABE (Mexico): 18 digits; the last is the Banxico control digit (weights 3, 7, 1). */
export function clabeError(clabe: string): string | null {
  if (!/^\d{18}$/.test(clabe)) return 'must be 18 digits';
  return clabeControlDigit(clabe.slice(0, 17)) === Number(clabe[17]) ? null : 'is not a valid CLABE (control digit)';
}

/** The Banxico control digit of a CLABE's first 17 digits. */
export function clabeControlDigit(first17: string): number {
  const weights = [3, 7, 1];
  let sum = 0;
  for (let i = 0; i < 17; i++) sum += (Number(first17[i]) * weights[i % 3]) % 10;
  return (10 - (sum % 10)) % 10;
}

/** IBAN: country format and length, mod-97 check digits (ibantools). */
export function ibanCheck(raw: string): { iban: string; country: string } | { error: string } {
  const iban = raw.replace(/\s+/g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$/.test(iban)) return { error: 'must be an IBAN: country code, check digits, then the account' };
  const result = extractIBAN(iban);
  if (!result.valid) return { error: 'is not a valid IBAN (check digits or length for its country)' };
  return { iban, country: result.countryCode! };
}

/** BIC / SWIFT: 8 or 11 characters; its country is characters 5-6. */
export function bicCheck(raw: string): { bic: string; country: string } | { error: string } {
  const bic = raw.replace(/\s+/g, '').toUpperCase();
  if (!isValidBIC(bic)) return { error: 'must be a BIC of 8 or 11 characters (bank, country, location, branch)' };
  return { bic, country: bic.slice(4, 6) };
}


const sha256 = (data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest());
const b58check = base58check(sha256);

/** CRC16-XModem, as Stellar's strkey uses. */
function crc16xmodem(bytes: Uint8Array): number {
  let crc = 0;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The EVM zero address: the `from` of tokens minted, which has nobody behind it to pay back. */
export const isZeroEvmAddress = (address: string) => /^0x0{40}$/i.test(address);

/** An address valid for its chain: EVM with EIP-55 checksum when mixed case, Solana, Bitcoin, Stellar, Tron. */
export function cryptoAddressError(chain: CryptoChain, address: string): string | null {
  if (isEvmChain(chain)) {
    if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return 'must be 0x followed by 40 hexadecimal characters';
    return isAddress(address, { strict: true }) ? null : 'fails its EIP-55 checksum (mixed case must match the checksum)';
  }
  try {
    switch (chain) {
      case 'solana':
        return base58.decode(address).length === 32 ? null : 'must be a base58 32-byte Solana public key';
      case 'bitcoin':
        decodeBitcoinAddress(address);
        return null;
      case 'tron': {
        const bytes = b58check.decode(address);
        return bytes.length === 21 && bytes[0] === 0x41 ? null : 'must be a Tron address (T…, base58check, 0x41 prefix)';
      }
      case 'stellar': {
        if (!/^G[A-Z2-7]{55}$/.test(address)) return 'must be a Stellar account id (G…, 56 characters)';
        const raw = base32.decode(address);
        if (raw.length !== 35 || raw[0] !== 6 << 3) return 'must be a Stellar account id (G…)';
        const crc = crc16xmodem(raw.subarray(0, 33));
        return raw[33] === (crc & 0xff) && raw[34] === crc >> 8 ? null : 'fails its Stellar strkey checksum';
      }
    }
  } catch {
    // Decoders throw on bad characters or checksums.
  }
  return `is not a valid ${chain} address`;
}

/**
 * A Bitcoin address of any network (mainnet bc1…/1…/3…, testnet tb1…, regtest bcrt1…): which network
 * the platform pays on is the node's, and its adapter refuses an address of another.
 */
function decodeBitcoinAddress(address: string) {
  let failure: unknown;
  for (const network of [NETWORK, TEST_NETWORK, { ...TEST_NETWORK, bech32: 'bcrt' }]) {
    try {
      return Address(network).decode(address);
    } catch (err) {
      failure = err;
    }
  }
  throw failure;
}

// Addresses nobody holds a key for, used to burn tokens: EVM's dead addresses and the precompiles
// (0x…01 to 0x…ff), Solana's incinerator. Any address whose key or hash bytes are all zero is one too.
const EVM_BURN = new Set(['0x000000000000000000000000000000000000dead', '0xdead000000000000000042069420694206942069']);
const SOLANA_BURN = new Set(['1nc1nerator11111111111111111111111111111111']);

/**
 * Why money sent to `address` would be destroyed, or null: a payee address (a payout, an external
 * account, a refund) is refused for it. Call on an address `cryptoAddressError` accepted.
 */
export function burnAddressError(chain: CryptoChain, address: string): string | null {
  const burn = 'is a burn address (no one holds its key): money sent there is destroyed';
  if (isEvmChain(chain)) {
    return EVM_BURN.has(address.toLowerCase()) || /^0x0{38}[0-9a-f]{2}$/i.test(address) ? burn : null;
  }
  if (chain === 'solana' && SOLANA_BURN.has(address)) return burn;
  // A program-derived address (off the ed25519 curve) has no private key: tokens paid to its token
  // account can only move if the program behind it moves them, so a payee must be a key's owner.
  if (chain === 'solana' && !base58.decode(address).every((b) => b === 0) && isOffCurveAddress(solanaAddress(address))) {
    return 'is off the ed25519 curve (a program-derived address): no one holds its key, so tokens paid to it could be lost; give the wallet\'s own address';
  }
  const payload = (() => {
    switch (chain) {
      case 'solana': return base58.decode(address);
      case 'tron': return b58check.decode(address).subarray(1);
      case 'stellar': return base32.decode(address).subarray(1, 33);
      case 'bitcoin': {
        const decoded = decodeBitcoinAddress(address) as { hash?: Uint8Array; pubkey?: Uint8Array };
        return decoded.hash ?? decoded.pubkey ?? new Uint8Array([1]);
      }
      default: return new Uint8Array([1]);
    }
  })();
  return payload.every((b) => b === 0) ? burn : null;
}

/** Writes a public key as the chain writes addresses: 32 bytes on solana and stellar, 20 on tron. */
export function encodeChainAddress(chain: SimulatedChain | 'solana', key: Uint8Array): string {
  switch (chain) {
    case 'solana':
      return base58.encode(key.subarray(0, 32));
    case 'tron':
      return b58check.encode(Uint8Array.of(0x41, ...key.subarray(0, 20)));
    case 'stellar': {
      const body = Uint8Array.of(6 << 3, ...key.subarray(0, 32));
      const crc = crc16xmodem(body);
      return base32.encode(Uint8Array.of(...body, crc & 0xff, crc >> 8)).replace(/=+$/, '');
    }
  }
}
