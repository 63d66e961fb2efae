import { parseBisDplTsv } from './formats/bis-dpl-tsv';
import { parseCanadaSemaXml } from './formats/canada-sema-xml';
import { parseDfatXlsx } from './formats/dfat-xlsx';
import { parseEuFsfXml } from './formats/eu-fsf-xml';
import { parseFtmJsonl } from './formats/ftm-jsonl';
import { parseInterpolJson } from './formats/interpol-json';
import { parseOfacCsv } from './formats/ofac-csv';
import { parseTradeCslJson } from './formats/trade-csl-json';
import { parseUkOfsiCsv } from './formats/uk-ofsi-csv';
import { parseUnXml } from './formats/un-xml';
import { parseWorldBankJson } from './formats/worldbank-json';
import type { ParsedList } from './types';

export type ListFormat =
  | 'ofac_csv' | 'bis_dpl_tsv' | 'trade_csl_json' | 'eu_fsf_xml' | 'uk_ofsi_csv' | 'un_xml' | 'worldbank_json'
  | 'interpol_json' | 'canada_sema_xml' | 'dfat_xlsx' | 'ftm_jsonl';

export interface ListFile {
  /** File name under `{SANCTIONS_DATA_DIR}/{source id}/`. */
  name: string;
  url: string;
  optional?: boolean;
}

export interface SourceDefinition {
  id: string;
  name: string;
  publisher: string;
  region: 'United States' | 'European Union' | 'United Kingdom' | 'United Nations' | 'International' | 'Asia-Pacific' | 'Americas' | 'Europe' | 'Middle East';
  format: ListFormat;
  files: ListFile[];
  /** For feeds that carry several lists (the US CSL): the list's name in the feed. */
  select?: string;
  homepage: string;
}

const OFAC = 'https://sanctionslistservice.ofac.treas.gov/api/PublicationPreview/exports';
const CSL = 'https://data.trade.gov/downloadable_consolidated_screening_list/v1/consolidated.json';
/** Aggregated feeds in FollowTheMoney form, for publishers without a machine-readable file of their own. */
const ftm = (dataset: string) => `https://data.opensanctions.org/datasets/latest/${dataset}/entities.ftm.json`;

/**
 * Every list screened against. Each is one source in `data_sources_checked`. `npm run cli -- lists
 * sync` downloads the files from these addresses into `{SANCTIONS_DATA_DIR}/{id}/`.
 */
export const SOURCES: SourceDefinition[] = [
  // United States
  {
    id: 'us_ofac_sdn', name: 'OFAC Specially Designated Nationals and Blocked Persons List', publisher: 'U.S. Treasury, OFAC',
    region: 'United States', format: 'ofac_csv', homepage: 'https://ofac.treasury.gov/specially-designated-nationals-and-blocked-persons-list-sdn-human-readable-lists',
    files: [
      { name: 'sdn.csv', url: `${OFAC}/SDN.CSV` },
      { name: 'alt.csv', url: `${OFAC}/ALT.CSV` },
      { name: 'add.csv', url: `${OFAC}/ADD.CSV` },
      { name: 'sdn_comments.csv', url: `${OFAC}/SDN_COMMENTS.CSV`, optional: true },
    ],
  },
  {
    id: 'us_ofac_cons', name: 'OFAC Consolidated Sanctions List (non-SDN)', publisher: 'U.S. Treasury, OFAC',
    region: 'United States', format: 'ofac_csv', homepage: 'https://ofac.treasury.gov/consolidated-sanctions-list-non-sdn-lists',
    files: [
      { name: 'cons_prim.csv', url: `${OFAC}/CONS_PRIM.CSV` },
      { name: 'cons_alt.csv', url: `${OFAC}/CONS_ALT.CSV` },
      { name: 'cons_add.csv', url: `${OFAC}/CONS_ADD.CSV` },
      { name: 'cons_comments.csv', url: `${OFAC}/CONS_COMMENTS.CSV`, optional: true },
    ],
  },
  {
    id: 'us_bis_dpl', name: 'BIS Denied Persons List', publisher: 'U.S. Commerce, Bureau of Industry and Security',
    region: 'United States', format: 'bis_dpl_tsv', homepage: 'https://www.bis.gov/dpl', files: [{ name: 'dpl.txt', url: 'https://www.bis.doc.gov/dpl/dpl.txt' }],
  },
  {
    id: 'us_bis_entity_list', name: 'BIS Entity List', publisher: 'U.S. Commerce, Bureau of Industry and Security', region: 'United States',
    format: 'trade_csl_json', select: 'Entity List', homepage: 'https://www.trade.gov/consolidated-screening-list', files: [{ name: 'consolidated.json', url: CSL }],
  },
  {
    id: 'us_bis_unverified', name: 'BIS Unverified List', publisher: 'U.S. Commerce, Bureau of Industry and Security', region: 'United States',
    format: 'trade_csl_json', select: 'Unverified List', homepage: 'https://www.trade.gov/consolidated-screening-list', files: [{ name: 'consolidated.json', url: CSL }],
  },
  {
    id: 'us_bis_meu', name: 'BIS Military End-User List', publisher: 'U.S. Commerce, Bureau of Industry and Security', region: 'United States',
    format: 'trade_csl_json', select: 'Military End User', homepage: 'https://www.trade.gov/consolidated-screening-list', files: [{ name: 'consolidated.json', url: CSL }],
  },
  {
    id: 'us_state_isn', name: 'State Department Nonproliferation Sanctions', publisher: 'U.S. State Department, ISN', region: 'United States',
    format: 'trade_csl_json', select: 'Nonproliferation Sanctions', homepage: 'https://www.trade.gov/consolidated-screening-list', files: [{ name: 'consolidated.json', url: CSL }],
  },
  {
    id: 'us_state_itar_debarred', name: 'ITAR Debarred Parties', publisher: 'U.S. State Department, DDTC', region: 'United States',
    format: 'trade_csl_json', select: 'ITAR Debarred', homepage: 'https://www.trade.gov/consolidated-screening-list', files: [{ name: 'consolidated.json', url: CSL }],
  },
  // European Union, United Kingdom, United Nations
  {
    id: 'eu_fsf', name: 'EU Financial Sanctions Files (consolidated list)', publisher: 'European Commission, FPI', region: 'European Union',
    format: 'eu_fsf_xml', homepage: 'https://data.europa.eu/data/datasets/consolidated-list-of-persons-groups-and-entities-subject-to-eu-financial-sanctions',
    files: [{ name: 'eu_fsf.xml', url: 'https://webgate.ec.europa.eu/fsd/fsf/public/files/xmlFullSanctionsList_1_1/content?token=dG9rZW4tMjAxNw' }],
  },
  {
    id: 'gb_hmt_ofsi', name: 'UK Consolidated List of Financial Sanctions Targets', publisher: 'HM Treasury, OFSI', region: 'United Kingdom',
    format: 'uk_ofsi_csv', homepage: 'https://www.gov.uk/government/publications/financial-sanctions-consolidated-list-of-targets',
    files: [{ name: 'ConList.csv', url: 'https://ofsistorage.blob.core.windows.net/publishlive/2022format/ConList.csv' }],
  },
  {
    id: 'un_sc', name: 'UN Security Council Consolidated List', publisher: 'United Nations Security Council', region: 'United Nations',
    format: 'un_xml', homepage: 'https://main.un.org/securitycouncil/en/content/un-sc-consolidated-list',
    files: [{ name: 'consolidated.xml', url: 'https://scsanctions.un.org/resources/xml/en/consolidated.xml' }],
  },
  // International bodies: police notices and development-bank debarments
  {
    id: 'interpol_red_notices', name: 'INTERPOL Red Notices (public)', publisher: 'INTERPOL', region: 'International',
    format: 'interpol_json', homepage: 'https://www.interpol.int/How-we-work/Notices/Red-Notices/View-Red-Notices',
    files: [{ name: 'red_notices.json', url: 'https://ws-public.interpol.int/notices/v1/red?resultPerPage=160' }],
  },
  {
    id: 'worldbank_debarred', name: 'World Bank Debarred Firms and Individuals', publisher: 'World Bank Group', region: 'International',
    format: 'worldbank_json', homepage: 'https://www.worldbank.org/en/projects-operations/procurement/debarred-firms',
    files: [{ name: 'debarred.json', url: 'https://apigwext.worldbank.org/dvsvc/v1.0/json/APPLICATION/ADOBE_EXPRNCE_MGR/FIRM/SANCTIONED_FIRM' }],
  },
  {
    id: 'adb_sanctions', name: 'Asian Development Bank Sanctions List', publisher: 'Asian Development Bank', region: 'International',
    format: 'ftm_jsonl', homepage: 'https://lnadbg4.adb.org/oga0009p.nsf/sancALL1P?OpenView', files: [{ name: 'entities.ftm.json', url: ftm('adb_sanctions') }],
  },
  {
    id: 'afdb_sanctions', name: 'African Development Bank Debarred Entities', publisher: 'African Development Bank', region: 'International',
    format: 'ftm_jsonl', homepage: 'https://www.afdb.org/en/projects-operations/debarment-and-sanctions-procedures', files: [{ name: 'entities.ftm.json', url: ftm('afdb_sanctions') }],
  },
  {
    id: 'ebrd_ineligible', name: 'EBRD Ineligible Entities', publisher: 'European Bank for Reconstruction and Development', region: 'International',
    format: 'ftm_jsonl', homepage: 'https://www.ebrd.com/ineligible-entities.html', files: [{ name: 'entities.ftm.json', url: ftm('ebrd_ineligible') }],
  },
  {
    id: 'iadb_sanctions', name: 'Inter-American Development Bank Sanctioned Firms and Individuals', publisher: 'Inter-American Development Bank', region: 'International',
    format: 'ftm_jsonl', homepage: 'https://www.iadb.org/en/transparency/sanctioned-firms-and-individuals', files: [{ name: 'entities.ftm.json', url: ftm('iadb_sanctions') }],
  },
  // Asia-Pacific
  {
    id: 'au_dfat', name: 'Australian Consolidated Sanctions List', publisher: 'Australia, Department of Foreign Affairs and Trade', region: 'Asia-Pacific',
    format: 'dfat_xlsx', homepage: 'https://www.dfat.gov.au/international-relations/security/sanctions/consolidated-list',
    files: [{ name: 'regs-consolidated.xlsx', url: 'https://www.dfat.gov.au/sites/default/files/regs-consolidated.xlsx' }],
  },
  {
    id: 'jp_mof', name: 'Japan Economic Sanctions and Export Restrictions', publisher: 'Japan, Ministry of Finance', region: 'Asia-Pacific',
    format: 'ftm_jsonl', homepage: 'https://www.mof.go.jp/policy/international_policy/gaitame_kawase/gaitame/economic_sanctions/list.html', files: [{ name: 'entities.ftm.json', url: ftm('jp_mof_sanctions') }],
  },
  {
    id: 'nz_russia', name: 'New Zealand Russia Sanctions Register', publisher: 'New Zealand, Ministry of Foreign Affairs and Trade', region: 'Asia-Pacific',
    format: 'ftm_jsonl', homepage: 'https://www.mfat.govt.nz/en/countries-and-regions/europe/ukraine/russian-invasion-of-ukraine/sanctions', files: [{ name: 'entities.ftm.json', url: ftm('nz_russia_sanctions') }],
  },
  {
    id: 'sg_terrorists', name: 'Singapore Terrorism (Suppression of Financing) Act designations', publisher: 'Singapore, Ministry of Home Affairs / MAS', region: 'Asia-Pacific',
    format: 'ftm_jsonl', homepage: 'https://www.mas.gov.sg/regulation/anti-money-laundering/targeted-financial-sanctions', files: [{ name: 'entities.ftm.json', url: ftm('sg_terrorists') }],
  },
  {
    id: 'in_mha_banned', name: 'India Banned Terrorist Organisations and Individuals', publisher: 'India, Ministry of Home Affairs', region: 'Asia-Pacific',
    format: 'ftm_jsonl', homepage: 'https://www.mha.gov.in/en/banned-organisations', files: [{ name: 'entities.ftm.json', url: ftm('in_mha_banned') }],
  },
  // Americas
  {
    id: 'ca_sema', name: 'Canada Consolidated Autonomous Sanctions List (SEMA)', publisher: 'Global Affairs Canada', region: 'Americas',
    format: 'canada_sema_xml', homepage: 'https://www.international.gc.ca/world-monde/international_relations-relations_internationales/sanctions/consolidated-consolide.aspx',
    files: [{ name: 'sema-lmes.xml', url: 'https://www.international.gc.ca/world-monde/assets/office_docs/international_relations-relations_internationales/sanctions/sema-lmes.xml' }],
  },
  {
    id: 'ca_listed_terrorists', name: 'Canada Listed Terrorist Entities', publisher: 'Public Safety Canada', region: 'Americas',
    format: 'ftm_jsonl', homepage: 'https://www.publicsafety.gc.ca/cnt/ntnl-scrt/cntr-trrrsm/lstd-ntts/crrnt-lstd-ntts-en.aspx', files: [{ name: 'entities.ftm.json', url: ftm('ca_listed_terrorists') }],
  },
  {
    id: 'ar_repet', name: 'Argentina Public Registry of Persons and Entities linked to Terrorism (RePET)', publisher: 'Argentina, Ministry of Justice', region: 'Americas',
    format: 'ftm_jsonl', homepage: 'https://repet.jus.gob.ar/', files: [{ name: 'entities.ftm.json', url: ftm('ar_repet') }],
  },
  // Other European and Middle Eastern national lists
  {
    id: 'ch_seco', name: 'Switzerland SECO Sanctions', publisher: 'Swiss State Secretariat for Economic Affairs', region: 'Europe',
    format: 'ftm_jsonl', homepage: 'https://www.seco.admin.ch/seco/en/home/Aussenwirtschaftspolitik_Wirtschaftliche_Zusammenarbeit/Wirtschaftsbeziehungen/exportkontrollen-und-sanktionen/sanktionen-embargos.html', files: [{ name: 'entities.ftm.json', url: ftm('ch_seco_sanctions') }],
  },
  {
    id: 'fr_tresor', name: 'France National Register of Asset Freezes', publisher: 'France, Direction générale du Trésor', region: 'Europe',
    format: 'ftm_jsonl', homepage: 'https://gels-avoirs.dgtresor.gouv.fr/', files: [{ name: 'entities.ftm.json', url: ftm('fr_tresor_gels_avoir') }],
  },
  {
    id: 'ua_nsdc', name: 'Ukraine NSDC State Register of Sanctions', publisher: 'Ukraine, National Security and Defense Council', region: 'Europe',
    format: 'ftm_jsonl', homepage: 'https://drs.nsdc.gov.ua/', files: [{ name: 'entities.ftm.json', url: ftm('ua_nsdc_sanctions') }],
  },
  {
    id: 'il_mod_terrorists', name: 'Israel Designated Terrorist Organizations and Individuals', publisher: 'Israel, Ministry of Defense (NBCTF)', region: 'Middle East',
    format: 'ftm_jsonl', homepage: 'https://nbctf.mod.gov.il/en/Pages/default.aspx', files: [{ name: 'entities.ftm.json', url: ftm('il_mod_terrorists') }],
  },
];

/** Parses one source's files (by file name) with the parser of its format. */
export async function parseSource(def: SourceDefinition, files: Record<string, Buffer>): Promise<ParsedList> {
  const f = (name: string) => files[name];
  const first = files[def.files[0].name];
  switch (def.format) {
    case 'ofac_csv': {
      const [primary, alt, add, comments] = def.files.map((x) => f(x.name));
      return parseOfacCsv(def.id, { primary, alt, add, comments });
    }
    case 'bis_dpl_tsv':
      return parseBisDplTsv(def.id, first);
    case 'trade_csl_json':
      return parseTradeCslJson(def.id, first, def.select);
    case 'eu_fsf_xml':
      return parseEuFsfXml(def.id, first);
    case 'uk_ofsi_csv':
      return parseUkOfsiCsv(def.id, first);
    case 'un_xml':
      return parseUnXml(def.id, first);
    case 'worldbank_json':
      return parseWorldBankJson(def.id, first);
    case 'interpol_json':
      return parseInterpolJson(def.id, first);
    case 'canada_sema_xml':
      return parseCanadaSemaXml(def.id, first);
    case 'dfat_xlsx':
      return parseDfatXlsx(def.id, first);
    case 'ftm_jsonl':
      return parseFtmJsonl(def.id, first);
  }
}

export const sourceById = new Map(SOURCES.map((s) => [s.id, s]));
