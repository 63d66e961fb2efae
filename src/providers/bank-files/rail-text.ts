import { transliterate } from 'transliteration';

// Names and texts in the character set of the rail that carries them (docs/BANK_FILES.md): a bank's
// software refuses a file with one character outside it, so every text is transliterated first
// ("José Núñez" → "JOSE NUNEZ" on ACH, "Łukasz Żółć" → "Lukasz Zolc" on SEPA), then anything still
// outside the set becomes a space. The original stays on the transfer and in the API.

/** NACHA's alphanumeric fields: printable ASCII, written in upper case. */
export function achText(text: string, width: number): string {
  return fit(transliterate(text).toUpperCase().replace(/[^\x20-\x7E]/g, ' '), width);
}

/** The EPC's basic Latin set for SEPA: a-z A-Z 0-9 / - ? : ( ) . , ' + and space. */
export function sepaText(text: string, width: number): string {
  return fit(transliterate(text).replace(/_/g, '-').replace(/[^a-zA-Z0-9/\-?:().,'+ ]/g, ' '), width);
}

/** Whether a text holds only the EPC basic Latin set. */
export const isSepaText = (text: string) => /^[a-zA-Z0-9/\-?:().,'+ ]*$/.test(text);

function fit(text: string, width: number): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, width).trim();
}
