/// The version `subdesk --version` prints.
public enum SubdeskVersion {
    public static let string = "0.1.0"
}
