/** One listed person, organisation, vessel or aircraft, in the shape every list format parses into. */
export interface ListedEntity {
  /** `{source}:{reference in the list}` — unique across lists. */
  id: string;
  source: string;
  entityType: 'individual' | 'business' | 'vessel' | 'aircraft' | 'unknown';
  names: ListedName[];
  /** YYYY, YYYY-MM or YYYY-MM-DD, as precise as the list gives. */
  birthDates: string[];
  /** ISO 3166-1 alpha-2 codes: nationality, citizenship, addresses, country of registration. */
  countries: string[];
  programs: string[];
  listedOn?: string;
  remarks?: string;
  /** Digital-currency addresses named in the listing (chain as the list names it). */
  cryptoAddresses: { currency: string; address: string }[];
}

export interface ListedName {
  value: string;
  kind: 'primary' | 'alias' | 'original_script';
  /** Lists mark some aliases as weak (OFAC "weak aka", UN quality "Low"). */
  weak?: boolean;
}

/** What a parser returns for one source file set. */
export interface ParsedList {
  entities: ListedEntity[];
  /** Publication date stated by the file itself, when it states one (YYYY-MM-DD). */
  publishedOn?: string;
}
