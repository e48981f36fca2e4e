import { Button, Checkbox, Group, Text, TextInput } from '@mantine/core';
import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, problemText } from '../../api/client';

/** In the lead drawer: record a sale status (and the FTD) the partner reported elsewhere, as the operator. */
export function ConversionForm({ leadId, hasFtd }: { leadId: string; hasFtd: boolean }) {
  const queryClient = useQueryClient();
  const [saleStatus, setSaleStatus] = useState('');
  const [ftd, setFtd] = useState(false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [saving, setSaving] = useState(false);

  async function save() {
    setSaving(true);
    setMessage(null);
    try {
      const body = { ...(saleStatus.trim() ? { sale_status: saleStatus.trim() } : {}), ...(ftd ? { ftd: true } : {}) };
      const r = await api.POST('/api/leads/{id}/conversion', { params: { path: { id: leadId } }, body });
      if (r.error) return setMessage({ ok: false, text: problemText(r.error) });
      setMessage({ ok: true, text: r.data.changed ? 'Recorded.' : r.data.notes.join(' ') || 'Nothing changed.' });
      setSaleStatus('');
      setFtd(false);
      await queryClient.invalidateQueries({ queryKey: ['lead', leadId] });
      await queryClient.invalidateQueries({ queryKey: ['leads'] });
    } finally {
      setSaving(false);
    }
  }

  return (
    <>
      <Group align="flex-end" data-testid="conversion-form">
        <TextInput
          label="Set sale status"
          placeholder="e.g. Deposited"
          value={saleStatus}
          onChange={(e) => setSaleStatus(e.currentTarget.value)}
          style={{ flex: 1 }}
        />
        {!hasFtd && <Checkbox label="FTD" checked={ftd} onChange={(e) => setFtd(e.currentTarget.checked)} mb={8} />}
        <Button onClick={() => void save()} loading={saving} disabled={!saleStatus.trim() && !ftd}>
          Record
        </Button>
      </Group>
      {message && (
        <Text
          size="sm"
          c={message.ok ? undefined : 'red.8'}
          role={message.ok ? 'status' : 'alert'}
          data-testid="conversion-message"
        >
          {message.text}
        </Text>
      )}
    </>
  );
}
