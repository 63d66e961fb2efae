import { transliterate } from 'transliteration';

/** Titles and honorifics: dropped from names (unless nothing else is left). */
const HONORIFICS = new Set([
  'mr', 'mrs', 'ms', 'miss', 'mx', 'dr', 'prof', 'professor', 'sir', 'dame', 'lord', 'lady', 'hon', 'honorable',
  'sheikh', 'shaikh', 'sheik', 'haji', 'hajji', 'hadji', 'mullah', 'mulla', 'maulana', 'imam', 'sayyid', 'sayed',
  'general', 'gen', 'colonel', 'col', 'major', 'maj', 'captain', 'capt', 'lieutenant', 'lt', 'sergeant', 'sgt',
  'admiral', 'adm', 'brigadier', 'commander', 'cmdr', 'rev', 'reverend', 'father', 'fr', 'monsignor',
  'herr', 'frau', 'senor', 'senora', 'sr', 'sra', 'don', 'dona', 'madame', 'mme', 'monsieur', 'mlle', 'ing', 'eng',
  'president', 'minister', 'ambassador', 'judge', 'justice', 'prince', 'princess', 'king', 'emir', 'amir',
]);

/** Legal forms of organisations, in the spellings lists and customers use. */
const LEGAL_FORMS = new Set([
  'llc', 'l l c', 'ltd', 'limited', 'inc', 'incorporated', 'corp', 'corporation', 'co', 'company', 'plc', 'llp', 'lp',
  'gmbh', 'mbh', 'ag', 'kg', 'ohg', 'ug', 'se', 'sa', 'sas', 'sarl', 'sl', 'srl', 'spa', 'sapa', 'bv', 'nv', 'vof',
  'ab', 'oy', 'oyj', 'as', 'asa', 'aps', 'a s', 'kft', 'zrt', 'nyrt', 'sp', 'zoo', 'sro', 'as', 'dd', 'doo', 'ad',
  'ooo', 'oao', 'zao', 'pao', 'ao', 'tov', 'pjsc', 'ojsc', 'cjsc', 'jsc', 'ojsc', 'pjsc', 'pvt', 'pte', 'pty', 'bhd', 'sdn',
  'fze', 'fzco', 'fzc', 'fz', 'llc fz', 'wll', 'est', 'establishment', 'kk', 'gk', 'yk', 'tbk', 'pt', 'cv',
  'sae', 'saog', 'saoc', 'psc', 'jsc', 'ltda', 'eireli', 'sab', 'decv', 'rl', 'scs', 'snc', 'eurl', 'sasu',
  'liability', 'joint', 'stock', 'closed', 'open', 'public', 'private', 'partnership', 'obshchestvo',
  'ogranichennoi', 'ogranichennoy', 'otvetstvennostyu', 'aktsionernoe', 'zakrytoe', 'otkrytoe', 'publichnoe',
]);

/** Long legal-form words are recognised with one typo ("limted", "compnay"). */
const LONG_FORMS = [...LEGAL_FORMS].filter((f) => f.length >= 6);

/** Connecting words in organisation names ("Bank of X", "Melikal for Medical and Medicine Trading"). */
const ORG_STOPWORDS = new Set(['and', 'for', 'of', 'the', 'de', 'del', 'la', 'le', 'les', 'des', 'du', 'y', 'e', 'et', 'und', 'van', 'der']);

function isLegalForm(token: string): boolean {
  if (LEGAL_FORMS.has(token)) return true;
  if (token.length < 5) return false;
  return LONG_FORMS.some((f) => Math.abs(f.length - token.length) <= 1 && withinOneEdit(f, token));
}

function withinOneEdit(a: string, b: string): boolean {
  if (a === b) return true;
  if (a.length === b.length) {
    let diff = 0;
    for (let i = 0; i < a.length; i++) {
      if (a[i] !== b[i]) {
        if (a[i + 1] === b[i] && a[i] === b[i + 1] && a.slice(i + 2) === b.slice(i + 2)) return true;
        if (++diff > 1) return false;
      }
    }
    return true;
  }
  const [s, l] = a.length < b.length ? [a, b] : [b, a];
  for (let i = 0; i < l.length; i++) if (l.slice(0, i) + l.slice(i + 1) === s) return true;
  return false;
}

export interface NormalizedName {
  tokens: string[];
  /** The input was written (at least partly) in a non-Latin script and was transliterated. */
  transliterated: boolean;
}

const NON_LATIN = /[^\u0000-\u024f\u1e00-\u1eff\s\p{P}\p{S}\d]/u;

/**
 * Unicode → ASCII (transliteration for non-Latin scripts, accents removed), lower case, punctuation
 * to spaces (apostrophes vanish: O'Neil → oneil), digits kept. Honorifics go; for organisations,
 * legal forms go too. Both the listed names and the screened name pass through here.
 */
export function normalizeName(raw: string, kind: 'individual' | 'business' | 'any' = 'any'): NormalizedName {
  const transliterated = NON_LATIN.test(raw);
  const ascii = transliterate(raw.normalize('NFKC'), { unknown: ' ' })
    .toLowerCase()
    .replace(/['’`ʼ]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
  let tokens = ascii.split(' ').filter(Boolean);
  const withoutTitles = tokens.filter((t) => !HONORIFICS.has(t));
  if (withoutTitles.length > 0) tokens = withoutTitles;
  if (kind !== 'individual') {
    const withoutForms = dropLegalForms(tokens);
    if (withoutForms.length > 0) tokens = withoutForms;
  }
  return { tokens, transliterated };
}

/** Forms written before the name ("ooo romashka", "llc mashimport"). */
const LEADING_FORMS = ['llc', 'ooo', 'oao', 'zao', 'pao', 'jsc', 'ojsc', 'pjsc', 'cjsc', 'tov', 'public', 'joint', 'closed', 'limited'];
const TRAILING_FORMS = [...LEGAL_FORMS].filter((f) => f.length >= 3 && !f.includes(' ')).sort((a, b) => b.length - a.length);

/** A legal form glued to a neighbour ("aakhirahlimited", "stockcompany", "llcmashimport") is split off. */
function splitGluedForms(token: string, depth = 0): string[] {
  if (depth > 3 || token.length < 6 || LEGAL_FORMS.has(token)) return [token];
  for (const f of TRAILING_FORMS) {
    if (token.endsWith(f) && token.length - f.length >= 4) return [...splitGluedForms(token.slice(0, -f.length), depth + 1), f];
  }
  for (const f of LEADING_FORMS) {
    if (token.startsWith(f) && token.length - f.length >= 4) return [f, ...splitGluedForms(token.slice(f.length), depth + 1)];
  }
  return [token];
}

function dropLegalForms(input: string[]): string[] {
  const tokens = input.flatMap((t) => splitGluedForms(t));
  // Single letters of dotted forms ("s a", "l l c") are joined first; then legal forms and
  // connecting words go wherever they stand (word order in organisation names varies).
  const joined: string[] = [];
  for (let i = 0; i < tokens.length; i++) {
    let j = i;
    let run = '';
    while (j < tokens.length && tokens[j].length === 1) run += tokens[j++];
    if (run.length >= 2 && LEGAL_FORMS.has(run)) {
      joined.push(run);
      i = j - 1;
    } else joined.push(tokens[i]);
  }
  return joined.filter((t) => !isLegalForm(t) && !ORG_STOPWORDS.has(t));
}
