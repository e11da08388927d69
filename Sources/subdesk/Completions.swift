import Foundation

/// Shell completion scripts for bash, zsh and fish, generated from the command table:
/// the commands, each command's options (and the global ones), and what an option's value
/// may be (`CommandOption.completion`). `subdesk completions SHELL` prints one.
struct Completions {
    let table: CommandTable

    enum Shell: String, CaseIterable {
        case bash, zsh, fish
    }

    func script(for shell: Shell) -> String {
        switch shell {
        case .bash: return bash
        case .zsh: return zsh
        case .fish: return fish
        }
    }

    /// What a command's words (not its options) complete to.
    private func argumentWords(_ command: CommandSpec) -> [String] {
        switch command.argumentCompletion {
        case .none: return []
        case .commands: return commandNames
        case .words(let words): return words
        }
    }

    private var commandNames: [String] { table.commands.map(\.name) + ["help"] }

    /// `help [COMMAND]` is no spec of its own; it completes command names.
    private var helpCommand: (name: String, completion: CommandSpec.ArgumentCompletion) { ("help", .commands) }

    private var globalOptions: [CommandOption] { OptionGroup.global.options }

    /// `-V --version`: what prints the version without a command.
    private var versionSpellings: [String] {
        (CommandTable.version.short.map { ["-\($0)"] } ?? []) + ["--" + CommandTable.version.name]
    }

    // MARK: bash

    var bash: String {
        let valued = Set(globalOptions.filter(\.takesValue).map(\.name)
                         + table.commands.flatMap { $0.allOptions.filter(\.takesValue).map(\.name) }).sorted()
        var optionCases: [String] = []
        var valueCases: [String] = []
        var argumentCases: [String] = []
        for command in table.commands {
            let names = command.allOptions.map { "--" + $0.name }.joined(separator: " ")
            optionCases.append("        \(command.name)) options=\"\(names)\" ;;")
            for option in command.allOptions {
                if let arm = bashValueArm("\(command.name):\(option.name)", option) { valueCases.append(arm) }
            }
            let words = argumentWords(command)
            if !words.isEmpty { argumentCases.append("        \(command.name)) words=\"\(words.joined(separator: " "))\" ;;") }
        }
        for option in globalOptions {
            if let arm = bashValueArm("*:\(option.name)", option) { valueCases.append(arm) }
        }
        argumentCases.append("        \(helpCommand.name)) words=\"\(commandNames.joined(separator: " "))\" ;;")
        return """
        # bash completion for subdesk, generated from its command table (subdesk completions bash).

        _subdesk_valued=" \(valued.joined(separator: " ")) "

        # _subdesk_value COMMAND OPTION: sets COMPREPLY to the option's values; fails when any word goes.
        _subdesk_value() {
            local cur=$3
            case "$1:$2" in
        \(valueCases.joined(separator: "\n"))
                *) return 1 ;;
            esac
            return 0
        }

        _subdesk() {
            local cur=${COMP_WORDS[COMP_CWORD]} prev="" command="" i=1 word
            [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}
            COMPREPLY=()
            # The command is the first word that is neither an option nor an option's value.
            while [ "$i" -lt "$COMP_CWORD" ]; do
                word=${COMP_WORDS[i]}
                case "$word" in
                    --) break ;;
                    --*=*) ;;
                    --*)
                        if [[ $_subdesk_valued == *" ${word#--} "* ]]; then
                            # --name=value arrives as three words: --name, =, value.
                            if [ "${COMP_WORDS[i+1]}" = "=" ]; then i=$((i + 1)); fi
                            i=$((i + 1))
                        fi ;;
                    -|=) ;;
                    *) command=$word; break ;;
                esac
                i=$((i + 1))
            done
            # The value of an option: after `--name value` or `--name=value`.
            local option=""
            if [ "$prev" = "=" ] && [ "$COMP_CWORD" -gt 1 ]; then
                option=${COMP_WORDS[COMP_CWORD-2]}
            elif [ "$cur" = "=" ]; then
                option=$prev
                cur=""
            elif [[ $prev == --* ]]; then
                option=$prev
            fi
            if [[ $option == --* ]] && [[ $_subdesk_valued == *" ${option#--} "* ]]; then
                _subdesk_value "$command" "${option#--}" "$cur"
                return 0
            fi
            if [[ $cur == -* ]]; then
                local options=""
                case "$command" in
        \(optionCases.joined(separator: "\n"))
                esac
                [ -z "$command" ] && options="\(versionSpellings.joined(separator: " "))"
                options="$options \(globalOptions.map { "--" + $0.name }.joined(separator: " "))"
                COMPREPLY=($(compgen -W "$options" -- "$cur"))
                return 0
            fi
            if [ -z "$command" ]; then
                COMPREPLY=($(compgen -W "\(commandNames.joined(separator: " "))" -- "$cur"))
                return 0
            fi
            local words=""
            case "$command" in
        \(argumentCases.joined(separator: "\n"))
            esac
            [ -n "$words" ] && COMPREPLY=($(compgen -W "$words" -- "$cur"))
            return 0
        }

        complete -F _subdesk subdesk

        """
    }

    /// One arm of `_subdesk_value`'s case, nil for a value with nothing to complete.
    private func bashValueArm(_ pattern: String, _ option: CommandOption) -> String? {
        let body: String
        switch option.completion {
        case .none: return nil
        case .words(let words):
            // A dimension's `NAME=` is followed by its value, not by a space.
            let nospace = words.contains { $0.hasSuffix("=") } ? "compopt -o nospace 2>/dev/null; " : ""
            body = "\(nospace)COMPREPLY=($(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\"))"
        case .file: body = "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- \"$cur\"))"
        case .directory: body = "compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- \"$cur\"))"
        }
        return "        \(pattern)) \(body) ;;"
    }

    // MARK: zsh

    var zsh: String {
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        func described(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "[", with: "\\[")
                .replacingOccurrences(of: "]", with: "\\]").replacingOccurrences(of: ":", with: "\\:")
        }
        func spec(_ option: CommandOption) -> String {
            let help = described(option.help)
            switch option.kind {
            case .flag: return quoted("--\(option.name)[\(help)]")
            case .value(let value), .repeatable(let value):
                let many = option.kind == .repeatable(value) ? "*" : ""
                let action: String
                switch option.completion {
                case .none: action = " "
                case .words(let words) where words.contains { $0.hasSuffix("=") }:
                    action = "{compadd -S '' -- \(words.joined(separator: " "))}"
                case .words(let words): action = "(\(words.joined(separator: " ")))"
                case .file: action = "_files"
                case .directory: action = "_files -/"
                }
                return quoted("\(many)--\(option.name)=[\(help)]:\(described(value)):\(action)")
            }
        }
        let globals = globalOptions.map(spec).joined(separator: " ")
        var cases: [String] = []
        for command in table.commands {
            var specs = command.allOptions.map(spec)
            let words = argumentWords(command)
            if !words.isEmpty { specs.append(quoted("*:argument:(\(words.joined(separator: " ")))")) }
            cases.append("        \(command.name)) _arguments $globals \(specs.joined(separator: " ")) && return 0 ;;")
        }
        cases.append("        help) _arguments $globals \(quoted("1:command:(\(commandNames.joined(separator: " ")))")) && return 0 ;;")
        let described = (table.commands.map { ($0.name, $0.abstract) } + [("help", "a command's own help")])
            .map { "    " + quoted($0.0 + ":" + $0.1.replacingOccurrences(of: ":", with: "\\:")) }
        return """
        #compdef subdesk
        # zsh completion for subdesk, generated from its command table (subdesk completions zsh).

        _subdesk() {
            local -a globals commands
            globals=(\(globals) \(versionSpellings.map { "'\($0)[\(CommandTable.version.help)]'" }.joined(separator: " ")))
            commands=(
        \(described.joined(separator: "\n"))
            )
            local curcontext=$curcontext state line
            _arguments -C $globals '1:command:->command' '*::argument:->argument' && return 0
            case $state in
            command)
                _describe -t commands 'subdesk command' commands && return 0 ;;
            argument)
                globals=(\(globals))
                curcontext=${curcontext%:*:*}:subdesk-$words[1]:
                case $words[1] in
        \(cases.joined(separator: "\n"))
                esac ;;
            esac
            return 1
        }

        if [ "$funcstack[1]" = "_subdesk" ]; then
            _subdesk "$@"
        else
            compdef _subdesk subdesk
        fi

        """
    }

    // MARK: fish

    var fish: String {
        func quoted(_ text: String) -> String {
            "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
        func line(_ condition: String?, _ option: CommandOption) -> String {
            var parts = ["complete -c subdesk"]
            if let condition { parts.append("-n " + quoted(condition)) }
            parts.append("-l " + option.name)
            switch option.completion {
            case .none: if option.takesValue { parts.append("-x") }
            case .words(let words): parts.append("-x -a " + quoted(words.joined(separator: " ")))
            case .file: parts.append("-r -F")
            case .directory: parts.append("-x -a '(__fish_complete_directories)'")
            }
            parts.append("-d " + quoted(option.help))
            return parts.joined(separator: " ")
        }
        let names = commandNames.joined(separator: " ")
        var lines = [
            "# fish completion for subdesk, generated from its command table (subdesk completions fish).",
            "complete -c subdesk -f",
        ]
        for command in table.commands {
            lines.append("complete -c subdesk -n " + quoted("not __fish_seen_subcommand_from \(names)")
                         + " -a \(command.name) -d " + quoted(command.abstract))
        }
        lines.append("complete -c subdesk -n " + quoted("not __fish_seen_subcommand_from \(names)")
                     + " -a help -d 'a command\\'s own help'")
        lines.append("complete -c subdesk -n " + quoted("not __fish_seen_subcommand_from \(names)")
                     + (CommandTable.version.short.map { " -s \($0)" } ?? "") + " -l \(CommandTable.version.name) -d "
                     + quoted(CommandTable.version.help))
        lines += globalOptions.map { line(nil, $0) }
        for command in table.commands {
            let condition = "__fish_seen_subcommand_from \(command.name)"
            lines += command.allOptions.map { line(condition, $0) }
            let words = argumentWords(command)
            if !words.isEmpty { lines.append("complete -c subdesk -n \(quoted(condition)) -a \(quoted(words.joined(separator: " ")))") }
        }
        lines.append("complete -c subdesk -n " + quoted("__fish_seen_subcommand_from help") + " -a " + quoted(table.commands.map(\.name).joined(separator: " ")))
        return lines.joined(separator: "\n") + "\n"
    }
}
