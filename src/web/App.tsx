import { useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useState, type ReactNode } from 'react';
import { Navigate, Route, Routes, useLocation, useNavigate } from 'react-router-dom';
import { borrowSession, notice, session, setEndedElsewhereHandler, setExpiredHandler } from './api/client';
import type { SessionKind } from './api/session';
import { Layout } from './Layout';
import { Loading } from './Loading';
import { loginPath } from './returnTo';

// One chunk per screen: the login page does not download the settings screens.
const Login = lazy(() => import('./screens/Login'));
const Setup = lazy(() => import('./screens/Setup'));
const ApiKeys = lazy(() => import('./screens/ApiKeys'));
const Leads = lazy(() => import('./screens/leads/Leads'));
const Injections = lazy(() => import('./screens/injections/Injections'));
const Imports = lazy(() => import('./screens/imports/Imports'));
const FlowList = lazy(() => import('./screens/flows/FlowList'));
const FlowEditor = lazy(() => import('./screens/flows/FlowEditor'));
const Blocklists = lazy(() => import('./screens/quality/Blocklists'));
const FlagWeights = lazy(() => import('./screens/quality/FlagWeights'));
const Review = lazy(() => import('./screens/quality/Review'));
const CapUsage = lazy(() => import('./screens/caps/CapUsage'));
const ProviderList = lazy(() => import('./screens/providers/ProviderList'));
const ProviderEditor = lazy(() => import('./screens/providers/ProviderEditor'));
const CampaignList = lazy(() => import('./screens/campaigns/CampaignList'));
const CampaignEditor = lazy(() => import('./screens/campaigns/CampaignEditor'));
const PartnerList = lazy(() => import('./screens/partners/PartnerList'));
const PartnerEditor = lazy(() => import('./screens/partners/PartnerEditor'));
const OperatorList = lazy(() => import('./screens/operators/OperatorList'));
const OperatorEditor = lazy(() => import('./screens/operators/OperatorEditor'));
const RoleList = lazy(() => import('./screens/roles/RoleList'));
const RoleEditor = lazy(() => import('./screens/roles/RoleEditor'));
const Overview = lazy(() => import('./screens/overview/Overview'));
const Analytics = lazy(() => import('./screens/analytics/Analytics'));
const Security = lazy(() => import('./screens/security/Security'));
const AuditLog = lazy(() => import('./screens/audit/AuditLog'));
const Profile = lazy(() => import('./screens/profile/Profile'));
const Licence = lazy(() => import('./screens/licence/Licence'));
const Privacy = lazy(() => import('./screens/privacy/Privacy'));
const Hosting = lazy(() => import('./screens/hosting/Hosting'));
const WebhookList = lazy(() => import('./screens/webhooks/WebhookList'));
const WebhookEditor = lazy(() => import('./screens/webhooks/WebhookEditor'));
const Invitation = lazy(() => import('./portal/Invitation'));
const PortalLayout = lazy(() => import('./portal/PortalLayout'));
const PortalApiKeys = lazy(() => import('./portal/PortalApiKeys'));
const PortalHome = lazy(() => import('./portal/PortalHome'));
const PortalLeads = lazy(() => import('./portal/PortalLeads'));
const PortalStats = lazy(() => import('./portal/PortalStats'));
const PortalCampaigns = lazy(() => import('./portal/PortalCampaigns'));
const PortalPostbacks = lazy(() => import('./portal/PortalPostbacks'));
const PortalProfile = lazy(() => import('./portal/PortalProfile'));
const PortalHistory = lazy(() => import('./portal/PortalHistory'));

/**
 * The signed-in pages of one side (the operators' dashboard or the providers' portal). A tab
 * without a session first asks the browser's other tabs for theirs of that kind (a new tab, a
 * shared link); without one it goes to sign in, remembering the page it was asked for. A session
 * of the other kind goes to its own side: a provider user never sees the dashboard, an operator
 * signed in here is sent to the dashboard from a portal URL.
 */
function RequireSession({ kind, children }: { kind: SessionKind; children: ReactNode }) {
  const location = useLocation();
  const token = session.token();
  const held = session.kind();
  const [asked, setAsked] = useState(false);
  useEffect(() => {
    if (token) return;
    let wanted = true;
    void borrowSession(kind).then((borrowed) => {
      if (!wanted) return;
      if (borrowed) session.set(borrowed);
      setAsked(true);
    });
    return () => {
      wanted = false;
    };
  }, [token, kind]);
  if (held && held !== kind) return <Navigate to={held === 'portal' ? '/portal' : '/'} replace />;
  if (token) return children;
  return asked ? <Navigate to={loginPath(location)} replace /> : <Loading />;
}

export function App() {
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  useEffect(() => {
    // Back to sign in, and after it to the page the operator was on.
    const toLogin = () => {
      queryClient.clear();
      navigate(loginPath(window.location), { replace: true });
    };
    setExpiredHandler(toLogin);
    setEndedElsewhereHandler(() => {
      notice.set('Your session has ended in another tab. Please sign in again.');
      toLogin();
    });
  }, [navigate, queryClient]);

  return (
    <Suspense fallback={<Loading />}>
      <Routes>
        <Route path="/login" element={<Login />} />
        <Route path="/setup" element={<Setup />} />
        <Route path="/portal/invitation" element={<Invitation />} />
        <Route
          path="/portal"
          element={
            <RequireSession kind="portal">
              <PortalLayout />
            </RequireSession>
          }
        >
          <Route index element={<PortalHome />} />
          <Route path="leads" element={<PortalLeads />} />
          <Route path="stats" element={<PortalStats />} />
          <Route path="campaigns" element={<PortalCampaigns />} />
          <Route path="postbacks" element={<PortalPostbacks />} />
          <Route path="api-keys" element={<PortalApiKeys />} />
          <Route path="history" element={<PortalHistory />} />
          <Route path="profile" element={<PortalProfile />} />
          <Route path="*" element={<Navigate to="/portal" replace />} />
        </Route>
        <Route
          element={
            <RequireSession kind="operator">
              <Layout />
            </RequireSession>
          }
        >
          <Route path="/" element={<Overview />} />
          <Route path="/analytics" element={<Analytics />} />
          <Route path="/settings/api" element={<ApiKeys />} />
          <Route path="/leads" element={<Leads />} />
          <Route path="/leads/injections" element={<Injections />} />
          <Route path="/leads/imports" element={<Imports />} />
          <Route path="/flows" element={<FlowList />} />
          <Route path="/flows/:id" element={<FlowEditor />} />
          <Route path="/caps" element={<CapUsage />} />
          <Route path="/quality/blocklists" element={<Blocklists />} />
          <Route path="/quality/settings" element={<FlagWeights />} />
          <Route path="/quality/review" element={<Review />} />
          <Route path="/traffic-providers" element={<ProviderList />} />
          <Route path="/traffic-providers/:id" element={<ProviderEditor />} />
          <Route path="/campaigns" element={<CampaignList />} />
          <Route path="/campaigns/:id" element={<CampaignEditor />} />
          <Route path="/partners" element={<PartnerList />} />
          <Route path="/partners/:id" element={<PartnerEditor />} />
          <Route path="/settings/operators" element={<OperatorList />} />
          <Route path="/settings/operators/:id" element={<OperatorEditor />} />
          <Route path="/settings/roles" element={<RoleList />} />
          <Route path="/settings/roles/:id" element={<RoleEditor />} />
          <Route path="/settings/security" element={<Security />} />
          <Route path="/settings/licence" element={<Licence />} />
          <Route path="/settings/privacy" element={<Privacy />} />
          <Route path="/settings/hosting" element={<Hosting />} />
          <Route path="/settings/webhooks" element={<WebhookList />} />
          <Route path="/settings/webhooks/:id" element={<WebhookEditor />} />
          <Route path="/audit" element={<AuditLog />} />
          <Route path="/profile" element={<Profile />} />
        </Route>
        <Route path="*" element={<Navigate to="/" replace />} />
      </Routes>
    </Suspense>
  );
}
