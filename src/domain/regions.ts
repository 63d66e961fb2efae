// Country groups, as plain data: workflow code imports these, so this module imports nothing.

export const EEA_COUNTRIES = new Set([
  'AT', 'BE', 'BG', 'HR', 'CY', 'CZ', 'DK', 'EE', 'FI', 'FR', 'DE', 'GR', 'HU', 'IE', 'IT', 'LV', 'LT', 'LU',
  'MT', 'NL', 'PL', 'PT', 'RO', 'SK', 'SI', 'ES', 'SE', 'IS', 'LI', 'NO',
]);
/** SEPA reaches beyond the EEA (e.g. Switzerland, the UK, Monaco). */
export const SEPA_COUNTRIES = new Set([...EEA_COUNTRIES, 'CH', 'GB', 'MC', 'SM', 'VA', 'AD']);
