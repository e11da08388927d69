import SubscriptionCore
import TerminalUI
public enum DashboardModule {}
