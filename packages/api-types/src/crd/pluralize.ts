/**
 * A port of the parts of gobuffalo/flect (v1.0.x) `Pluralize` that Cluster API relies on through
 * `CalculateCRDName`. CAPI finds a provider's CRD by name, so our plural must be byte-for-byte what flect
 * produces; a near miss ("ipaddresss") makes every reference to the kind unresolvable.
 *
 * Scope: one lower-case word (CAPI lower-cases the kind before pluralising, so flect sees a single part).
 * Rule order mirrors flect: exact dictionary words, then dictionary words as suffixes (last entry first),
 * then the ordered suffix list; every rule also has a "plural already" twin that leaves the word alone.
 */

interface DictionaryWord {
  readonly singular: string;
  readonly plural: string;
  /** Matched only as the whole word, never as the suffix of a compound. */
  readonly exact?: boolean;
}

/** flect's dictionary (irregular and identical plurals). */
const DICTIONARY: readonly DictionaryWord[] = [
  { singular: 'aircraft', plural: 'aircraft' },
  { singular: 'beef', plural: 'beef' },
  { singular: 'bison', plural: 'bison' },
  { singular: 'blues', plural: 'blues' },
  { singular: 'chassis', plural: 'chassis' },
  { singular: 'deer', plural: 'deer' },
  { singular: 'fish', plural: 'fish' },
  { singular: 'moose', plural: 'moose' },
  { singular: 'police', plural: 'police' },
  { singular: 'salmon', plural: 'salmon' },
  { singular: 'series', plural: 'series' },
  { singular: 'sheep', plural: 'sheep' },
  { singular: 'shrimp', plural: 'shrimp' },
  { singular: 'species', plural: 'species' },
  { singular: 'swine', plural: 'swine' },
  { singular: 'trout', plural: 'trout' },
  { singular: 'tuna', plural: 'tuna' },
  { singular: 'you', plural: 'you' },
  { singular: 'child', plural: 'children' },
  { singular: 'ox', plural: 'oxen', exact: true },
  { singular: 'foot', plural: 'feet' },
  { singular: 'goose', plural: 'geese' },
  { singular: 'man', plural: 'men' },
  { singular: 'human', plural: 'humans' },
  { singular: 'louse', plural: 'lice', exact: true },
  { singular: 'mouse', plural: 'mice' },
  { singular: 'tooth', plural: 'teeth' },
  { singular: 'woman', plural: 'women' },
  { singular: 'die', plural: 'dice', exact: true },
  { singular: 'person', plural: 'people' },
  { singular: 'adieu', plural: 'adieux' },
  { singular: 'fabliau', plural: 'fabliaux' },
  { singular: 'bureau', plural: 'bureaus' },
  { singular: 'criterion', plural: 'criteria' },
  { singular: 'ganglion', plural: 'ganglia' },
  { singular: 'lexicon', plural: 'lexica' },
  { singular: 'mitochondrion', plural: 'mitochondria' },
  { singular: 'noumenon', plural: 'noumena' },
  { singular: 'phenomenon', plural: 'phenomena' },
  { singular: 'taxon', plural: 'taxa' },
  { singular: 'media', plural: 'media' },
  { singular: 'medium', plural: 'media' },
  { singular: 'stadium', plural: 'stadiums' },
  { singular: 'aquarium', plural: 'aquaria' },
  { singular: 'auditorium', plural: 'auditoria' },
  { singular: 'symposium', plural: 'symposia' },
  { singular: 'curriculum', plural: 'curriculums' },
  { singular: 'quota', plural: 'quotas' },
  { singular: 'alumnus', plural: 'alumni' },
  { singular: 'bacillus', plural: 'bacilli' },
  { singular: 'cactus', plural: 'cacti' },
  { singular: 'coccus', plural: 'cocci' },
  { singular: 'focus', plural: 'foci' },
  { singular: 'locus', plural: 'loci' },
  { singular: 'nucleus', plural: 'nuclei' },
  { singular: 'octopus', plural: 'octupuses' },
  { singular: 'radius', plural: 'radii' },
  { singular: 'syllabus', plural: 'syllabi' },
  { singular: 'corpus', plural: 'corpora' },
  { singular: 'genus', plural: 'genera' },
  { singular: 'alumna', plural: 'alumnae' },
  { singular: 'vertebra', plural: 'vertebrae' },
  { singular: 'differentia', plural: 'differentiae' },
  { singular: 'minutia', plural: 'minutiae' },
  { singular: 'vita', plural: 'vitae' },
  { singular: 'larva', plural: 'larvae' },
  { singular: 'postcava', plural: 'postcavae' },
  { singular: 'praecava', plural: 'praecavae' },
  { singular: 'uva', plural: 'uvae' },
  { singular: 'apex', plural: 'apices' },
  { singular: 'codex', plural: 'codices' },
  { singular: 'index', plural: 'indices' },
  { singular: 'latex', plural: 'latices' },
  { singular: 'vertex', plural: 'vertices' },
  { singular: 'vortex', plural: 'vortices' },
  { singular: 'appendix', plural: 'appendices' },
  { singular: 'radix', plural: 'radices' },
  { singular: 'helix', plural: 'helices' },
  { singular: 'axis', plural: 'axes', exact: true },
  { singular: 'crisis', plural: 'crises' },
  { singular: 'ellipsis', plural: 'ellipses' },
  { singular: 'genesis', plural: 'geneses' },
  { singular: 'oasis', plural: 'oases' },
  { singular: 'thesis', plural: 'theses' },
  { singular: 'testis', plural: 'testes' },
  { singular: 'base', plural: 'bases' },
  { singular: 'basis', plural: 'bases' },
  { singular: 'alias', plural: 'aliases', exact: true },
  { singular: 'vedalia', plural: 'vedalias' },
  { singular: 'use', plural: 'uses', exact: true },
  { singular: 'abuse', plural: 'abuses' },
  { singular: 'cause', plural: 'causes' },
  { singular: 'clause', plural: 'clauses' },
  { singular: 'cruse', plural: 'cruses' },
  { singular: 'excuse', plural: 'excuses' },
  { singular: 'fuse', plural: 'fuses' },
  { singular: 'house', plural: 'houses' },
  { singular: 'misuse', plural: 'misuses' },
  { singular: 'muse', plural: 'muses' },
  { singular: 'pause', plural: 'pauses' },
  { singular: 'ache', plural: 'aches' },
  { singular: 'topaz', plural: 'topazes' },
  { singular: 'buffalo', plural: 'buffaloes' },
  { singular: 'potato', plural: 'potatoes' },
  { singular: 'tomato', plural: 'tomatoes' },
  { singular: 'equipment', plural: 'equipment' },
  { singular: 'information', plural: 'information' },
  { singular: 'jeans', plural: 'jeans' },
  { singular: 'money', plural: 'money' },
  { singular: 'news', plural: 'news' },
  { singular: 'rice', plural: 'rice' },
  { singular: 'dwarf', plural: 'dwarfs' },
  { singular: 'hoof', plural: 'hoofs' },
  { singular: 'thief', plural: 'thieves' },
  { singular: 'chive', plural: 'chives' },
  { singular: 'hive', plural: 'hives' },
  { singular: 'move', plural: 'moves' },
  { singular: 'movie', plural: 'movies' },
  { singular: 'cookie', plural: 'cookies' },
  { singular: 'pretorium', plural: 'pretoriums' },
  { singular: 'agenda', plural: 'agendas' },
  { singular: 'formula', plural: 'formulas' },
  { singular: 'shoe', plural: 'shoes' },
  { singular: 'toe', plural: 'toes', exact: true },
  { singular: 'graffiti', plural: 'graffiti' },
  { singular: 'id', plural: 'ids', exact: true },
];

/** flect's accepted alternative plurals, which it also leaves unchanged. */
const ALTERNATIVE_PLURALS: readonly string[] = [
  'beefs',
  'fishes',
  'salmons',
  'shrimps',
  'swines',
  'trouts',
  'tunas',
  'adieus',
  'bureaux',
  'ganglions',
  'lexicons',
  'mitochondrions',
  'stadia',
  'aquariums',
  'auditoriums',
  'symposiums',
  'curricula',
  'alumnuses',
  'cactuses',
  'focuses',
  'locuses',
  'nucleuses',
  'octopi',
  'radiuses',
  'corpuses',
  'apexes',
  'codexes',
  'indexes',
  'latexes',
  'vertexes',
  'vortexes',
  'appendixes',
  'radixes',
  'helixes',
  'buffalos',
  'dwarves',
  'hooves',
  'formulae',
];

/** Dictionary entries flect maps only one way (their plural is not treated as a known plural). */
const ONE_WAY_SINGULARS: ReadonlySet<string> = new Set(['blues', 'medium', 'basis', 'ellipsis']);

/** Plural forms flect treats as already plural and returns unchanged. */
const KNOWN_PLURALS: ReadonlySet<string> = new Set([
  ...DICTIONARY.filter((word) => !ONE_WAY_SINGULARS.has(word.singular)).map((word) => word.plural),
  ...ALTERNATIVE_PLURALS,
]);

const SINGULAR_TO_PLURAL: ReadonlyMap<string, string> = new Map(DICTIONARY.map((w) => [w.singular, w.plural]));

/** flect's ordered suffix list; the first match wins. */
const SUFFIX_RULES: readonly (readonly [singular: string, plural: string])[] = [
  ['tive', 'tives'],
  ['eaf', 'eaves'],
  ['oaf', 'oaves'],
  ['afe', 'aves'],
  ['arf', 'arves'],
  ['rfe', 'rves'],
  ['rf', 'rves'],
  ['lf', 'lves'],
  ['fe', 'ves'],
  ['ay', 'ays'],
  ['ey', 'eys'],
  ['oy', 'oys'],
  ['quy', 'quies'],
  ['uy', 'uys'],
  ['y', 'ies'],
  ['eau', 'eaux'],
  ['bula', 'bulae'],
  ['dula', 'bulae'],
  ['lula', 'bulae'],
  ['nula', 'bulae'],
  ['vula', 'bulae'],
  ['hedron', 'hedra'],
  ['ium', 'ia'],
  ['seum', 'seums'],
  ['eum', 'ea'],
  ['oum', 'oa'],
  ['stracum', 'straca'],
  ['dum', 'da'],
  ['elum', 'ela'],
  ['ilum', 'ila'],
  ['olum', 'ola'],
  ['ulum', 'ula'],
  ['llum', 'lla'],
  ['ylum', 'yla'],
  ['imum', 'ima'],
  ['ernum', 'erna'],
  ['gnum', 'gna'],
  ['brum', 'bra'],
  ['crum', 'cra'],
  ['terum', 'tera'],
  ['serum', 'sera'],
  ['trum', 'tra'],
  ['antum', 'anta'],
  ['atum', 'ata'],
  ['entum', 'enta'],
  ['etum', 'eta'],
  ['itum', 'ita'],
  ['otum', 'ota'],
  ['utum', 'uta'],
  ['ctum', 'cta'],
  ['ovum', 'ova'],
  ['trix', 'trices'],
  ['iasis', 'iases'],
  ['mesis', 'meses'],
  ['kinesis', 'kineses'],
  ['resis', 'reses'],
  ['gnosis', 'gnoses'],
  ['opsis', 'opses'],
  ['ysis', 'yses'],
  ['ouse', 'ouses'],
  ['lause', 'lauses'],
  ['us', 'uses'],
  ['ch', 'ches'],
  ['io', 'ios'],
  ['sh', 'shes'],
  ['ss', 'sses'],
  ['ez', 'ezzes'],
  ['iz', 'izzes'],
  ['tz', 'tzes'],
  ['zz', 'zzes'],
  ['ano', 'anos'],
  ['lo', 'los'],
  ['to', 'tos'],
  ['oo', 'oos'],
  ['o', 'oes'],
  ['x', 'xes'],
];

/** Abbreviations flect pluralises with a bare "s" (or "es" after an "s"). */
const ACRONYMS: ReadonlySet<string> = new Set([
  'API',
  'ASCII',
  'CPU',
  'CSS',
  'DNS',
  'EOF',
  'GUID',
  'HTML',
  'HTTP',
  'HTTPS',
  'ID',
  'IP',
  'JSON',
  'LHS',
  'QPS',
  'RAM',
  'RHS',
  'RPC',
  'SLA',
  'SMTP',
  'SQL',
  'SSH',
  'TCP',
  'TLS',
  'TTL',
  'UDP',
  'UI',
  'UID',
  'UUID',
  'URI',
  'URL',
  'UTF8',
  'VM',
  'XML',
  'XMPP',
  'XSRF',
  'XSS',
]);

interface PluralRule {
  readonly suffix: string;
  /** Undefined: the word already ends in a plural form and is returned unchanged. */
  readonly plural?: string;
}

/** The rule list in flect's priority order (dictionary compounds, newest first, then the suffix list). */
const PLURAL_RULES: readonly PluralRule[] = (() => {
  const rules: PluralRule[] = [];
  for (const [singular, plural] of SUFFIX_RULES) {
    rules.push({ suffix: plural }, { suffix: singular, plural });
  }
  // flect inserts each dictionary word's pair at the front, so the last word is tried first and each plural
  // twin comes before its singular.
  const compounds: PluralRule[] = [];
  for (const word of DICTIONARY) {
    if (word.exact) continue;
    compounds.unshift({ suffix: word.plural }, { suffix: word.singular, plural: word.plural });
  }
  return [...compounds, ...rules];
})();

/**
 * Pluralises one lower-case word exactly as flect does.
 * @throws Error when the word is empty or is not lower-case ASCII letters and digits.
 */
export function pluralize(word: string): string {
  if (!/^[a-z0-9]+$/.test(word)) {
    throw new Error(`pluralize: expected one lower-case word of ASCII letters and digits, got ${JSON.stringify(word)}`);
  }
  if (ACRONYMS.has(word.toUpperCase())) {
    return word.endsWith('s') ? `${word}es` : `${word}s`;
  }
  if (KNOWN_PLURALS.has(word)) return word;
  const irregular = SINGULAR_TO_PLURAL.get(word);
  if (irregular !== undefined) return irregular;
  for (const rule of PLURAL_RULES) {
    if (!word.endsWith(rule.suffix)) continue;
    return rule.plural === undefined ? word : word.slice(0, word.length - rule.suffix.length) + rule.plural;
  }
  return word.endsWith('s') ? word : `${word}s`;
}
