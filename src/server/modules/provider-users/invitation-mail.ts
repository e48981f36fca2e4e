// Mailing an invitation link (issue 27), after the invitation is committed: when SMTP_URL is set,
// the link goes to the invited address through the SMTP client (outbound/smtp.ts, which passes the
// outbound guard). A failure is an answer ("failed" and why), never a lost invitation. The link
// and its token are in the message only: never in a log, an error or the audit record.
import type { Static } from 'typebox';
import type { Config, MailSettings } from '../../config.js';
import type { DB } from '../../db/database.js';
import { MailError, sendMail } from '../../outbound/smtp.js';
import { audit, type Actor } from '../audit/service.js';
import type { InvitationMail } from './schemas.js';

/** What mailing needs from the config: the relay and sender, and the networks the guard allows. */
export interface MailSetup {
  settings: MailSettings | null;
  allowedNetworks: readonly string[];
}

export const mailSetupOf = (config: Config): MailSetup => ({
  settings: config.mail,
  allowedNetworks: config.partnerAllowedNetworks,
});

export interface Invitation {
  providerId: string;
  providerName: string;
  userId: string;
  email: string;
  name: string;
  /** The link as answered: absolute when a public URL is set. */
  url: string;
  expires: string;
}

const utc = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;

export const invitationText = (inv: Invitation) =>
  [
    `Hello ${inv.name},`,
    '',
    `You are invited to the portal of ${inv.providerName} on Leadgate. Open this link to set your password:`,
    '',
    inv.url,
    '',
    `The link works once only, until ${utc(inv.expires)}. If it has expired or was used, ask for a new invitation.`,
    'If you did not expect this message, ignore it.',
    '',
  ].join('\n');

async function attempt(setup: MailSetup, inv: Invitation): Promise<Static<typeof InvitationMail>> {
  const to = inv.email;
  if (!setup.settings) return { status: 'not_configured', to, error: null };
  if (!/^https?:\/\//.test(inv.url))
    return {
      status: 'failed',
      to,
      error: 'No public URL is set (Hosting), so the link has no address a mail could carry. Hand it over by hand.',
    };
  try {
    await sendMail(
      {
        settings: setup.settings,
        allowedNetworks: setup.allowedNetworks,
        timeoutMs: 10_000,
        totalMs: 30_000,
      },
      {
        from: setup.settings.from,
        to: { name: inv.name === inv.email ? null : inv.name, address: inv.email },
        subject: `Your invitation to the ${inv.providerName} portal`,
        text: invitationText(inv),
      },
    );
    return { status: 'sent', to, error: null };
  } catch (err) {
    // A MailError's message names the step and the server's answer, never the password or the link.
    return { status: 'failed', to, error: err instanceof MailError ? err.message : 'the mail could not be sent' };
  }
}

/** Mails the link (outside any transaction) and records what happened in the audit log. */
export async function mailInvitation(db: DB, actor: Actor, setup: MailSetup, inv: Invitation) {
  const mail = await attempt(setup, inv);
  await audit(db, actor, {
    action: 'provider_user.invitation_mail',
    target_type: 'traffic_provider',
    target_id: inv.providerId,
    details: { provider_user_id: inv.userId, email: inv.email, status: mail.status, error: mail.error },
  });
  return mail;
}
