/// ISO 3166 numeric codes, as seed 000 keeps them (a few countries; the rest left as an exercise).
struct ISO3166 {
    enum Country: Int16, CaseIterable {
        case guy = 328  // Guyana
        case pol = 616  // Poland
        case ltu = 440  // Lithuania
        case nic = 558  // Nicaragua
        case jpn = 392  // Japan
        case ken = 404  // Kenya
        case unknown = 0

        static func fromISO3166(_ code: String) -> Country {
            switch code.uppercased() {
            case "GY": .guy
            case "PL": .pol
            case "LT": .ltu
            case "NI": .nic
            case "JP": .jpn
            case "KE": .ken
            default: .unknown
            }
        }

        var name: String {
            switch self {
            case .guy: "Guyana"
            case .pol: "Poland"
            case .ltu: "Lithuania"
            case .nic: "Nicaragua"
            case .jpn: "Japan"
            case .ken: "Kenya"
            case .unknown: "Unknown"
            }
        }
    }

    enum Continent: Int16 {
        case africa = 10001
        case asia = 10003
        case europe = 10004
        case northAmerica = 10005
        case southAmerica = 10007

        init?(country: Country) {
            switch country {
            case .pol, .ltu: self = .europe
            case .guy: self = .southAmerica
            case .nic: self = .northAmerica
            case .jpn: self = .asia
            case .ken: self = .africa
            case .unknown: return nil
            }
        }

        var name: String {
            switch self {
            case .africa: "Africa"
            case .asia: "Asia"
            case .europe: "Europe"
            case .northAmerica: "North America"
            case .southAmerica: "South America"
            }
        }
    }
}
