public enum TerminalUIModule {}
