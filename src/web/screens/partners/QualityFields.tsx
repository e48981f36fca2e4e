import type { FieldErrors } from '../../ui/fields';
import { FlagRuleFields } from '../../ui/FlagRuleFields';
import type { PartnerForm } from './form';

/** The partner's quality rule: leads it is never offered, by their fraud flags or their quality score. */
export function QualityFields({
  form,
  errors,
  set,
}: {
  form: PartnerForm;
  errors: FieldErrors;
  set: (patch: Partial<PartnerForm>) => void;
}) {
  return (
    <FlagRuleFields
      title="Lead quality"
      testId="partner-quality"
      flagsLabel="Refuse leads flagged"
      flagsDescription="Leads with any of these flags go to the flow's other partners"
      noFlags="None: takes flagged leads"
      scoreLabel="Minimum quality score"
      scoreDescription="0–100; empty: any score"
      flags={form.refuseFlags}
      minScore={form.minScore}
      onFlags={(refuseFlags) => set({ refuseFlags })}
      onMinScore={(minScore) => set({ minScore })}
      flagsError={errors.at('quality.refuse_flags') ?? errors.at('quality')}
      scoreError={errors.at('quality.min_score')}
    />
  );
}
