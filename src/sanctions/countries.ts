import countries from 'i18n-iso-countries';

// English names as lists write them, beyond what i18n-iso-countries knows.
const EXTRA: Record<string, string> = {
  'russia': 'RU', 'iran': 'IR', 'syria': 'SY', 'north korea': 'KP', 'korea, north': 'KP',
  "democratic people's republic of korea": 'KP', 'south korea': 'KR', 'korea, south': 'KR', 'burma': 'MM',
  'venezuela': 'VE', 'bolivia': 'BO', 'tanzania': 'TZ', 'vietnam': 'VN', 'laos': 'LA', 'moldova': 'MD',
  'palestinian': 'PS', 'west bank': 'PS', 'gaza': 'PS', 'kosovo': 'XK', 'turkey': 'TR', 'turkiye': 'TR',
  'united kingdom': 'GB', 'uk': 'GB', 'united states': 'US', 'usa': 'US', 'czech republic': 'CZ',
  'democratic republic of the congo': 'CD', 'congo, democratic republic of the': 'CD', 'congo': 'CG',
  'ivory coast': 'CI', "cote d'ivoire": 'CI', 'macedonia': 'MK', 'the former yugoslav republic of macedonia': 'MK',
  'brunei': 'BN', 'cape verde': 'CV', 'swaziland': 'SZ', 'east timor': 'TL', 'micronesia': 'FM',
  'region: gaza': 'PS', 'crimea': 'UA', 'taiwan': 'TW', 'hong kong': 'HK', 'macau': 'MO',
};

const cache = new Map<string, string | undefined>();

/** ISO 3166-1 alpha-2 for a country as written in a list ("Russia", "IRAN", "DE"), or undefined. */
export function countryToIso2(raw: string | undefined | null): string | undefined {
  if (!raw) return undefined;
  const name = raw.trim();
  if (!name) return undefined;
  if (cache.has(name)) return cache.get(name);
  let code: string | undefined;
  if (/^[A-Za-z]{2}$/.test(name) && countries.isValid(name.toUpperCase())) code = name.toUpperCase();
  else {
    const lower = name.toLowerCase().replace(/\.$/, '');
    code = EXTRA[lower] ?? countries.getAlpha2Code(name, 'en') ?? countries.getAlpha2Code(lower.replace(/^the /, ''), 'en');
    if (!code) {
      const simplified = lower.replace(/\(.*?\)/g, '').replace(/,.*$/, '').trim();
      code = EXTRA[simplified] ?? countries.getAlpha2Code(simplified, 'en');
    }
  }
  cache.set(name, code);
  return code;
}
