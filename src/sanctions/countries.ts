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

// Nationalities as adjectives (DFAT, UN and others write "Iraqi", "Russian").
const DEMONYMS: Record<string, string> = {
  afghan: 'AF', albanian: 'AL', algerian: 'DZ', american: 'US', angolan: 'AO', argentine: 'AR', argentinian: 'AR',
  armenian: 'AM', australian: 'AU', austrian: 'AT', azerbaijani: 'AZ', bahraini: 'BH', bangladeshi: 'BD',
  belarusian: 'BY', belgian: 'BE', bosnian: 'BA', brazilian: 'BR', british: 'GB', bulgarian: 'BG', burmese: 'MM',
  burundian: 'BI', cambodian: 'KH', cameroonian: 'CM', canadian: 'CA', central_african: 'CF', chadian: 'TD',
  chilean: 'CL', chinese: 'CN', colombian: 'CO', congolese: 'CD', croatian: 'HR', cuban: 'CU', cypriot: 'CY',
  czech: 'CZ', danish: 'DK', dutch: 'NL', egyptian: 'EG', emirati: 'AE', eritrean: 'ER', estonian: 'EE',
  ethiopian: 'ET', filipino: 'PH', finnish: 'FI', french: 'FR', georgian: 'GE', german: 'DE', ghanaian: 'GH',
  greek: 'GR', guinean: 'GN', haitian: 'HT', hungarian: 'HU', indian: 'IN', indonesian: 'ID', iranian: 'IR',
  iraqi: 'IQ', irish: 'IE', israeli: 'IL', italian: 'IT', ivorian: 'CI', japanese: 'JP', jordanian: 'JO',
  kazakh: 'KZ', kenyan: 'KE', kuwaiti: 'KW', kyrgyz: 'KG', lao: 'LA', latvian: 'LV', lebanese: 'LB', liberian: 'LR',
  libyan: 'LY', lithuanian: 'LT', malaysian: 'MY', malian: 'ML', mexican: 'MX', moldovan: 'MD', mongolian: 'MN',
  montenegrin: 'ME', moroccan: 'MA', mozambican: 'MZ', nepalese: 'NP', nicaraguan: 'NI', nigerian: 'NG', nigerien: 'NE',
  'north korean': 'KP', norwegian: 'NO', omani: 'OM', pakistani: 'PK', palestinian: 'PS', panamanian: 'PA',
  peruvian: 'PE', polish: 'PL', portuguese: 'PT', qatari: 'QA', romanian: 'RO', russian: 'RU', rwandan: 'RW',
  saudi: 'SA', 'saudi arabian': 'SA', senegalese: 'SN', serbian: 'RS', singaporean: 'SG', slovak: 'SK',
  slovenian: 'SI', somali: 'SO', 'south african': 'ZA', 'south korean': 'KR', 'south sudanese': 'SS', spanish: 'ES',
  'sri lankan': 'LK', sudanese: 'SD', swedish: 'SE', swiss: 'CH', syrian: 'SY', taiwanese: 'TW', tajik: 'TJ',
  tanzanian: 'TZ', thai: 'TH', tunisian: 'TN', turkish: 'TR', turkmen: 'TM', ugandan: 'UG', ukrainian: 'UA',
  uzbek: 'UZ', venezuelan: 'VE', vietnamese: 'VN', yemeni: 'YE', zambian: 'ZM', zimbabwean: 'ZW',
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
    code = EXTRA[lower] ?? DEMONYMS[lower] ?? countries.getAlpha2Code(name, 'en') ?? countries.getAlpha2Code(lower.replace(/^the /, ''), 'en');
    if (!code) {
      const simplified = lower.replace(/\(.*?\)/g, '').replace(/,.*$/, '').trim();
      code = EXTRA[simplified] ?? countries.getAlpha2Code(simplified, 'en');
    }
  }
  cache.set(name, code);
  return code;
}
