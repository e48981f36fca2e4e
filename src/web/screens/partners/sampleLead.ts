// The sample lead a partner test sends and the placeholders a template may use, as the API has
// them (GET /api/partners/sample-lead): one query for the test panel and the placeholder list.
import { useQuery } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import type { paths } from '../../api/schema';

export type SampleLead = paths['/api/partners/sample-lead']['get']['responses'][200]['content']['application/json'];
export type TestLead = SampleLead['lead'];
type LeadOverrides = NonNullable<
  NonNullable<paths['/api/partners/test']['post']['requestBody']>['content']['application/json']['lead']
>;

export const useSampleLead = () =>
  useQuery({
    queryKey: ['partner-sample-lead'],
    queryFn: async () => must(await api.GET('/api/partners/sample-lead')),
    staleTime: Infinity,
  });

/** The fields the operator changed, as the test's `lead` overrides (an emptied optional field is sent as null). */
export function leadOverrides(sample: TestLead, edited: TestLead): LeadOverrides {
  const out: Record<string, string | null> = {};
  for (const k of Object.keys(sample) as (keyof TestLead)[])
    if ((edited[k] ?? '') !== (sample[k] ?? '')) out[k] = edited[k] === '' && sample[k] === null ? null : edited[k];
  // The fields the API takes as text only are never null here: the sample has them all.
  return out as LeadOverrides;
}
