// The fictional world the demo data is drawn from. Every host is under .example and every email
// under example.com/.net/.org (reserved names), so a demo database can never reach anyone.

export interface CountryDef {
  code: string;
  weight: number;
  dial: string; // E.164 country code
  digits: number; // national number length
  language: string;
  first: string[];
  last: string[];
}

export const COUNTRIES: CountryDef[] = [
  {
    code: 'DE',
    weight: 18,
    dial: '49',
    digits: 11,
    language: 'de',
    first: ['Lukas', 'Anna', 'Jonas', 'Marie', 'Felix', 'Laura', 'Paul', 'Lea'],
    last: ['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Wagner', 'Becker'],
  },
  {
    code: 'GB',
    weight: 14,
    dial: '44',
    digits: 10,
    language: 'en',
    first: ['Oliver', 'Amelia', 'Harry', 'Isla', 'George', 'Ava', 'Jack', 'Emily'],
    last: ['Smith', 'Jones', 'Taylor', 'Brown', 'Williams', 'Wilson', 'Evans'],
  },
  {
    code: 'FR',
    weight: 9,
    dial: '33',
    digits: 9,
    language: 'fr',
    first: ['Gabriel', 'Jade', 'Louis', 'Louise', 'Raphaël', 'Emma', 'Arthur', 'Chloé'],
    last: ['Martin', 'Bernard', 'Dubois', 'Thomas', 'Robert', 'Richard', 'Petit'],
  },
  {
    code: 'IT',
    weight: 8,
    dial: '39',
    digits: 10,
    language: 'it',
    first: ['Leonardo', 'Sofia', 'Francesco', 'Giulia', 'Alessandro', 'Aurora', 'Lorenzo'],
    last: ['Rossi', 'Russo', 'Ferrari', 'Esposito', 'Bianchi', 'Romano', 'Colombo'],
  },
  {
    code: 'ES',
    weight: 8,
    dial: '34',
    digits: 9,
    language: 'es',
    first: ['Hugo', 'Lucía', 'Martín', 'Sofía', 'Daniel', 'Martina', 'Pablo'],
    last: ['García', 'Fernández', 'González', 'Rodríguez', 'López', 'Martínez', 'Sánchez'],
  },
  {
    code: 'NL',
    weight: 5,
    dial: '31',
    digits: 9,
    language: 'nl',
    first: ['Noah', 'Emma', 'Sem', 'Julia', 'Liam', 'Mila', 'Lucas'],
    last: ['de Jong', 'Jansen', 'de Vries', 'van den Berg', 'Bakker', 'Visser'],
  },
  {
    code: 'PL',
    weight: 6,
    dial: '48',
    digits: 9,
    language: 'pl',
    first: ['Antoni', 'Zuzanna', 'Jan', 'Julia', 'Aleksander', 'Maja', 'Franciszek'],
    last: ['Nowak', 'Kowalski', 'Wiśniewski', 'Wójcik', 'Kowalczyk', 'Kamiński'],
  },
  {
    code: 'CA',
    weight: 6,
    dial: '1',
    digits: 10,
    language: 'en',
    first: ['Liam', 'Olivia', 'Noah', 'Charlotte', 'William', 'Emma', 'Benjamin'],
    last: ['Smith', 'Brown', 'Tremblay', 'Martin', 'Roy', 'Gagnon', 'Lee'],
  },
  {
    code: 'AU',
    weight: 6,
    dial: '61',
    digits: 9,
    language: 'en',
    first: ['Oliver', 'Charlotte', 'Jack', 'Amelia', 'William', 'Isla', 'Noah'],
    last: ['Smith', 'Jones', 'Williams', 'Brown', 'Wilson', 'Taylor', 'Nguyen'],
  },
  {
    code: 'AE',
    weight: 4,
    dial: '971',
    digits: 9,
    language: 'ar',
    first: ['Mohammed', 'Fatima', 'Ahmed', 'Mariam', 'Omar', 'Aisha', 'Khalid'],
    last: ['Al Mansoori', 'Al Hashimi', 'Al Nuaimi', 'Al Marzouqi', 'Al Ketbi'],
  },
  {
    code: 'CH',
    weight: 3,
    dial: '41',
    digits: 9,
    language: 'de',
    first: ['Noah', 'Mia', 'Liam', 'Emma', 'Luca', 'Lina', 'Leon'],
    last: ['Müller', 'Meier', 'Schmid', 'Keller', 'Weber', 'Huber'],
  },
  {
    code: 'SE',
    weight: 3,
    dial: '46',
    digits: 9,
    language: 'sv',
    first: ['William', 'Alice', 'Liam', 'Maja', 'Noah', 'Elsa', 'Hugo'],
    last: ['Andersson', 'Johansson', 'Karlsson', 'Nilsson', 'Eriksson', 'Larsson'],
  },
  {
    code: 'AT',
    weight: 3,
    dial: '43',
    digits: 10,
    language: 'de',
    first: ['Paul', 'Emilia', 'Jakob', 'Anna', 'Maximilian', 'Marie'],
    last: ['Gruber', 'Huber', 'Bauer', 'Wagner', 'Müller', 'Pichler'],
  },
  {
    code: 'NO',
    weight: 2,
    dial: '47',
    digits: 8,
    language: 'no',
    first: ['Jakob', 'Nora', 'Emil', 'Emma', 'Noah', 'Olivia'],
    last: ['Hansen', 'Johansen', 'Olsen', 'Larsen', 'Andersen', 'Pedersen'],
  },
  {
    code: 'MX',
    weight: 3,
    dial: '52',
    digits: 10,
    language: 'es',
    first: ['Santiago', 'Sofía', 'Mateo', 'Valentina', 'Sebastián', 'Regina'],
    last: ['Hernández', 'García', 'Martínez', 'López', 'González', 'Pérez'],
  },
  {
    code: 'IE',
    weight: 2,
    dial: '353',
    digits: 9,
    language: 'en',
    first: ['Jack', 'Grace', 'James', 'Emily', 'Noah', 'Fiadh'],
    last: ['Murphy', 'Kelly', "O'Sullivan", 'Walsh', 'Byrne', 'Ryan'],
  },
  {
    code: 'BE',
    weight: 2,
    dial: '32',
    digits: 9,
    language: 'nl',
    first: ['Noah', 'Olivia', 'Arthur', 'Louise', 'Jules', 'Mila'],
    last: ['Peeters', 'Janssens', 'Maes', 'Jacobs', 'Mertens', 'Willems'],
  },
  {
    code: 'BR',
    weight: 2,
    dial: '55',
    digits: 11,
    language: 'pt',
    first: ['Miguel', 'Helena', 'Arthur', 'Alice', 'Gael', 'Laura'],
    last: ['Silva', 'Santos', 'Oliveira', 'Souza', 'Rodrigues', 'Ferreira'],
  },
];

export const EMAIL_DOMAINS = ['example.com', 'example.net', 'example.org', 'mail.example.com', 'inbox.example.net'];

export interface PartnerDef {
  name: string;
  slug: string;
  countries: string[]; // [] = all
  timezone: string;
  days: number[];
  hours: [string, string] | null; // null: around the clock
  dailyCap: number | null;
  totalCap: number | null;
  /** How willing the partner is to take a lead it is offered (0..1). */
  acceptRate: number;
  /** Share of delivered leads that deposit. */
  ftdRate: number;
  /** What the partner pays: per FTD (cpa) or per delivered lead (cpl), in cents. */
  deal: { model: 'cpa' | 'cpl'; cents: number };
  method: 'POST' | 'GET' | 'PUT';
}

export const PARTNERS: PartnerDef[] = [
  {
    name: 'Apex Capital',
    slug: 'apex',
    countries: ['DE', 'AT', 'CH'],
    timezone: 'Europe/Berlin',
    days: [1, 2, 3, 4, 5],
    hours: ['08:00', '20:00'],
    dailyCap: 400,
    totalCap: null,
    acceptRate: 0.82,
    ftdRate: 0.09,
    deal: { model: 'cpa', cents: 95000 },
    method: 'POST',
  },
  {
    name: 'BlueOcean FX',
    slug: 'blueocean',
    countries: ['GB', 'IE', 'AU', 'CA'],
    timezone: 'Europe/London',
    days: [1, 2, 3, 4, 5, 6],
    hours: ['07:00', '22:00'],
    dailyCap: 600,
    totalCap: null,
    acceptRate: 0.78,
    ftdRate: 0.07,
    deal: { model: 'cpa', cents: 110000 },
    method: 'POST',
  },
  {
    name: 'Crestline Markets',
    slug: 'crestline',
    countries: [],
    timezone: 'UTC',
    days: [1, 2, 3, 4, 5, 6, 7],
    hours: null,
    dailyCap: null,
    totalCap: null,
    acceptRate: 0.7,
    ftdRate: 0.04,
    deal: { model: 'cpl', cents: 3500 },
    method: 'POST',
  },
  {
    name: 'Delta Trade Group',
    slug: 'delta',
    countries: ['FR', 'BE', 'CH'],
    timezone: 'Europe/Paris',
    days: [1, 2, 3, 4, 5],
    hours: ['09:00', '19:00'],
    dailyCap: 250,
    totalCap: 20000,
    acceptRate: 0.8,
    ftdRate: 0.08,
    deal: { model: 'cpa', cents: 90000 },
    method: 'POST',
  },
  {
    name: 'Evergreen Invest',
    slug: 'evergreen',
    countries: ['IT', 'ES'],
    timezone: 'Europe/Rome',
    days: [1, 2, 3, 4, 5],
    hours: ['09:00', '21:00'],
    dailyCap: 350,
    totalCap: null,
    acceptRate: 0.76,
    ftdRate: 0.06,
    deal: { model: 'cpa', cents: 80000 },
    method: 'PUT',
  },
  {
    name: 'Falcon Brokers',
    slug: 'falcon',
    countries: ['AE'],
    timezone: 'Asia/Dubai',
    days: [1, 2, 3, 4, 5, 6, 7],
    hours: ['10:00', '23:00'],
    dailyCap: 150,
    totalCap: null,
    acceptRate: 0.72,
    ftdRate: 0.11,
    deal: { model: 'cpa', cents: 130000 },
    method: 'POST',
  },
  {
    name: 'Goldleaf Finance',
    slug: 'goldleaf',
    countries: ['DE', 'NL', 'SE', 'NO'],
    timezone: 'Europe/Amsterdam',
    days: [1, 2, 3, 4, 5],
    hours: ['08:30', '18:30'],
    dailyCap: 300,
    totalCap: null,
    acceptRate: 0.74,
    ftdRate: 0.085,
    deal: { model: 'cpa', cents: 100000 },
    method: 'POST',
  },
  {
    name: 'Harbor Point',
    slug: 'harborpoint',
    countries: ['CA', 'AU'],
    timezone: 'America/Toronto',
    days: [1, 2, 3, 4, 5],
    hours: ['09:00', '21:00'],
    dailyCap: 200,
    totalCap: null,
    acceptRate: 0.8,
    ftdRate: 0.065,
    deal: { model: 'cpa', cents: 105000 },
    method: 'POST',
  },
  {
    name: 'Ironwood Trading',
    slug: 'ironwood',
    countries: ['PL'],
    timezone: 'Europe/Warsaw',
    days: [1, 2, 3, 4, 5],
    hours: ['09:00', '18:00'],
    dailyCap: 200,
    totalCap: null,
    acceptRate: 0.77,
    ftdRate: 0.07,
    deal: { model: 'cpa', cents: 60000 },
    method: 'GET',
  },
  {
    name: 'Juniper Markets',
    slug: 'juniper',
    countries: ['MX', 'BR', 'ES'],
    timezone: 'America/Mexico_City',
    days: [1, 2, 3, 4, 5, 6],
    hours: ['08:00', '20:00'],
    dailyCap: 250,
    totalCap: null,
    acceptRate: 0.75,
    ftdRate: 0.05,
    deal: { model: 'cpa', cents: 50000 },
    method: 'POST',
  },
  {
    name: 'Keystone CFD',
    slug: 'keystone',
    countries: ['GB', 'DE', 'FR', 'IT'],
    timezone: 'Europe/London',
    days: [1, 2, 3, 4, 5],
    hours: ['08:00', '17:00'],
    dailyCap: 500,
    totalCap: null,
    acceptRate: 0.68,
    ftdRate: 0.075,
    deal: { model: 'cpa', cents: 100000 },
    method: 'POST',
  },
  {
    name: 'Lumen Capital',
    slug: 'lumen',
    countries: [],
    timezone: 'Europe/Berlin',
    days: [1, 2, 3, 4, 5, 6, 7],
    hours: null,
    dailyCap: 800,
    totalCap: null,
    acceptRate: 0.6,
    ftdRate: 0.03,
    deal: { model: 'cpl', cents: 2500 },
    method: 'POST',
  },
];

export interface ProviderDef {
  name: string;
  weight: number;
  /** Share of this provider's leads that are duplicates. */
  dupRate: number;
  campaigns: { name: string; countries: string[]; model: 'cpl' | 'cpa'; cents: number; flow: number }[];
}

// flow: index into FLOWS.
export const PROVIDERS: ProviderDef[] = [
  {
    name: 'ClickForge Media',
    weight: 22,
    dupRate: 0.06,
    campaigns: [
      { name: 'CF – DACH Crypto AI', countries: ['DE', 'AT', 'CH'], model: 'cpl', cents: 2200, flow: 0 },
      { name: 'CF – UK Quantum', countries: ['GB'], model: 'cpa', cents: 60000, flow: 1 },
      { name: 'CF – Global Mix', countries: [], model: 'cpl', cents: 1500, flow: 5 },
    ],
  },
  {
    name: 'LeadNest',
    weight: 18,
    dupRate: 0.09,
    campaigns: [
      { name: 'LN – FR/BE Trading', countries: ['FR', 'BE', 'CH'], model: 'cpl', cents: 2000, flow: 2 },
      { name: 'LN – Italy & Spain', countries: ['IT', 'ES'], model: 'cpl', cents: 1800, flow: 3 },
      { name: 'LN – Nordics', countries: ['SE', 'NO', 'NL'], model: 'cpa', cents: 55000, flow: 0 },
    ],
  },
  {
    name: 'Northwind Traffic',
    weight: 14,
    dupRate: 0.05,
    campaigns: [
      { name: 'NW – Canada/Australia', countries: ['CA', 'AU'], model: 'cpa', cents: 65000, flow: 4 },
      { name: 'NW – UK Native', countries: ['GB'], model: 'cpl', cents: 2600, flow: 1 },
      { name: 'NW – DE Search', countries: ['DE'], model: 'cpl', cents: 2400, flow: 0 },
    ],
  },
  {
    name: 'Orbit Affiliates',
    weight: 12,
    dupRate: 0.12,
    campaigns: [
      { name: 'OA – LatAm', countries: ['MX', 'BR'], model: 'cpl', cents: 900, flow: 5 },
      { name: 'OA – Gulf Premium', countries: ['AE'], model: 'cpa', cents: 80000, flow: 5 },
    ],
  },
  {
    name: 'PeakReach',
    weight: 10,
    dupRate: 0.07,
    campaigns: [
      { name: 'PR – Poland', countries: ['PL'], model: 'cpl', cents: 1200, flow: 3 },
      { name: 'PR – EU Broad', countries: [], model: 'cpl', cents: 1400, flow: 5 },
      { name: 'PR – Italy Video', countries: ['IT'], model: 'cpa', cents: 45000, flow: 3 },
    ],
  },
  {
    name: 'Quasar Leads',
    weight: 9,
    dupRate: 0.1,
    campaigns: [
      { name: 'QL – DE/AT Push', countries: ['DE', 'AT'], model: 'cpl', cents: 1700, flow: 0 },
      { name: 'QL – France Email', countries: ['FR'], model: 'cpl', cents: 1600, flow: 2 },
    ],
  },
  {
    name: 'Redline Digital',
    weight: 8,
    dupRate: 0.08,
    campaigns: [
      { name: 'RD – UK/IE Social', countries: ['GB', 'IE'], model: 'cpl', cents: 2300, flow: 1 },
      { name: 'RD – Spain Social', countries: ['ES'], model: 'cpl', cents: 1500, flow: 3 },
    ],
  },
  {
    name: 'Silverline Partners',
    weight: 7,
    dupRate: 0.04,
    campaigns: [
      { name: 'SP – Premium Tier 1', countries: ['DE', 'GB', 'CH', 'AU', 'CA'], model: 'cpa', cents: 70000, flow: 4 },
      { name: 'SP – Mexico', countries: ['MX'], model: 'cpl', cents: 1000, flow: 5 },
    ],
  },
];

// targets: partner indexes in priority order.
export const FLOWS: { name: string; targets: number[] }[] = [
  { name: 'DACH & Nordics', targets: [0, 6, 10, 2] },
  { name: 'UK & Ireland', targets: [1, 10, 2] },
  { name: 'France & Benelux', targets: [3, 10, 2] },
  { name: 'Southern & Eastern Europe', targets: [4, 8, 9, 11] },
  { name: 'Tier 1 Overseas', targets: [7, 1, 0, 2] },
  { name: 'Worldwide fallback', targets: [5, 9, 2, 11] },
];

export const FUNNELS = ['crypto-ai-v3', 'quantum-profit', 'bitcoin-era-2', 'oil-profit', 'smart-etf', 'gold-rush-news'];
export const TRAFFIC_SOURCES = ['fb', 'google', 'tiktok', 'native', 'push', 'email', 'yt'];
export const SALE_STATUSES_OPEN = [
  'New',
  'No Answer',
  'Call Back',
  'In Progress',
  'Not Interested',
  'Wrong Number',
  'Low Potential',
  'Voicemail',
];
export const REJECT_REASONS = [
  'Country not accepted',
  'Outside working hours',
  'Daily cap reached',
  'Invalid phone number',
  'Lead already registered',
];
