import SubscriptionCore
print("subdesk \(SubdeskVersion.string)")
