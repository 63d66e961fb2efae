declare module 'talisman/phonetics/double-metaphone' {
  /** [primary, secondary] Double Metaphone codes. */
  export default function doubleMetaphone(word: string): [string, string];
}
