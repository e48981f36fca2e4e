// ISO 3166-1 alpha-2: the 249 officially assigned codes. A static list on purpose: the lead's
// country decides routing (partner and campaign country lists) and the phone's default region,
// so reserved or user-assigned codes ("EU", "UK", "XK", "XX") are refused rather than guessed at.
const CODES =
  'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ ' +
  'BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
  'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ ' +
  'DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR ' +
  'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ' +
  'ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ ' +
  'LA LB LC LI LK LR LS LT LU LV LY ' +
  'MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ ' +
  'NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA ' +
  'RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ ' +
  'TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ ' +
  'VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW';

export const COUNTRY_CODES: ReadonlySet<string> = new Set(CODES.split(' '));

/** True for an assigned ISO 3166-1 alpha-2 code, upper case. */
export const isCountryCode = (code: string) => COUNTRY_CODES.has(code);

/** Codes often sent in place of the ISO one, with the code meant. */
export const COUNTRY_MIXUPS: Readonly<Record<string, string>> = { UK: 'GB', EL: 'GR' };

/**
 * What is wrong with a country code, in words that say what to send instead (null: nothing).
 * Upper case is the caller's to apply where it accepts lower case (intake does; schemas do not).
 */
export function countryProblem(code: string): string | null {
  if (isCountryCode(code)) return null;
  const meant = COUNTRY_MIXUPS[code.toUpperCase()];
  if (meant) return `"${code}" is not an ISO 3166-1 alpha-2 code; use ${meant}`;
  if (isCountryCode(code.toUpperCase())) return `"${code}" must be upper case: ${code.toUpperCase()}`;
  return 'is not an assigned ISO 3166-1 alpha-2 country code (e.g. DE, GB, US)';
}
